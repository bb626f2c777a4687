# probe.py RUNDIR/PART T:ALGO:P:S_MiB COL [trace]: per round, the column's calibration and the
# simulated ag / rs / all-reduce against measured.
import importlib.util, sys, os, json, subprocess
spec = importlib.util.spec_from_file_location("vl", "/work/main/perf/sim/validate_local.py")
vl = importlib.util.module_from_spec(spec); spec.loader.exec_module(vl)
part, pt, col = sys.argv[1], sys.argv[2], sys.argv[3]
t, algo, p, s = pt.split(":"); p = int(p); s = int(s) << 20
above = {c[0]: c[1] for c in vl.CPU_COLUMNS}[col]
cap = {}
def score(a, rounds, *args, **kw): cap["rounds"] = rounds; cap["a"] = a
vl.score = score
sys.argv = ["vl", "--build", "/work/main/build-lead", "--rescore", part, "--cores", "2"]
vl.main()
a = cap["a"]; a.build = "/work/main/build-lead"
key = (t, algo, p, s); kg = f"{p}:{s}"
for i, r in enumerate(cap["rounds"]):
    x = vl.cpu_round(a, r, key, above)
    c = r["calib"][t]
    params = vl.params_line(t, x["alpha"], x["rate"] / 1e3, x["red"], a.cores)
    ar = vl.simulate(a.build, t, p, s, params, x["ran"], a.cores, x["core"] / 1e3, red_ip=x["red_ip"], pair_copy=x["pair_copy"], copy_gbps=x["copy"])[2]
    ag = vl.simulate(a.build, t, p, s, params, "ring", a.cores, x["core"] / 1e3, coll="allgather")[2]
    rs = vl.simulate(a.build, t, p, s, params, "ring", a.cores, x["core"] / 1e3, coll="reducescatter", pair_copy=x["pair_copy"])[2]
    print(f"r{i} ran {x['ran']:6s} alpha {x['alpha']:.1f} rate {x['rate']:.0f} core {x['core']:.0f} red {x['red']:.2f} redip {x['red_ip']:.2f} pc {x['pair_copy']:.2f} | ag {ag:.0f}/{c['allgather_us'].get(kg,0):.0f} rs {rs:.0f}/{c['reducescatter_us'].get(kg,0):.0f} ar {ar:.0f}/{r['points'][key][0]:.0f} = {ar/r['points'][key][0]:.2f}  membw[s] {r['membw'][s]}")
    if len(sys.argv) > 4 and i == 0:
        for coll, extra in (("allreduce", ["--sim-reduce-ip-gbps", f"{x['red_ip']:.4f}"]), ("allgather", []), ("reducescatter", [])):
            cmd = [a.build + "/tools/loom-plan/loom-plan", *vl.plan_args(t, p), "--params", params, "--simulate", "--sim-always", "--sim-cores", "2", "--min", str(s), "--max", str(s), "--coll", coll, "--sim-core-gbps", f"{x['core']/1e3:.4f}", "--sim-pair-copy-gbps", f"{x['pair_copy']:.4f}", "--algo", f"{coll}:ring", "--sim-step-trace", f"/tmp/s32/tr-{coll}.txt"] + extra
            subprocess.run(cmd, stdout=subprocess.DEVNULL)
            print(open(f"/tmp/s32/tr-{coll}.txt").read()[:1500])
