import importlib.util, sys, os
spec = importlib.util.spec_from_file_location("vl", "/work/main/perf/sim/validate_local.py")
vl = importlib.util.module_from_spec(spec); spec.loader.exec_module(vl)
cols = dict((x[0], x[1]) for x in vl.CPU_COLUMNS)
state = {}
def myscore(a, rounds, *rest):
    for k in rounds[0]["points"]:
        t, algo, p, s = k
        rans = [r["points"][k][1] for r in rounds]
        if not any(x.startswith("rd") for x in rans):
            continue
        out = []
        for c in ("cpu_gu", "cpu_gd"):
            res = vl.simulate_cpu(a, rounds, k, cols[c])
            out.append(f"{c} {res['ratio']:.2f} [" + " ".join(f"{x:.2f}" for x in res["ratios"]) + "]")
        print(state["part"], t, algo, p, s >> 20, "".join("d" if x.startswith("rd") else "-" for x in rans), " | ".join(out), flush=True)
vl.score = myscore
for part in sys.argv[1:]:
    state["part"] = part.split("loom-")[1]
    sys.argv = ["vl", "--build", "/work/main/build-lead", "--rescore", part, "--cores", "2"]
    vl.main()
