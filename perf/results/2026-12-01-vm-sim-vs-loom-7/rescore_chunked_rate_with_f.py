#!/usr/bin/env python3
# Re-scores this run from its points.json with the chunked column as validate_local.py computes it
# since this run: the 2-rank chunked rate, f from the 1-message p-rank sendrecv (this run measured
# f with chunked p-rank sendrecv too). Run from the repository root:
#   python3 DIR/rescore_chunked_rate_with_f.py DIR/tcp DIR/shm
import json, sys
sys.path.insert(0, 'perf/sim')
import validate_local as v
class A: pass
a = A(); a.build = 'build-lead'; a.cores = 2
for d in sys.argv[1:]:
    j = json.load(open(d + '/points.json'))
    rounds = []
    for r in j['rounds']:
        pts = {tuple(p['key'][:2]) + (int(p['key'][2]), int(p['key'][3])): (p['us'], p['loom_ran']) for p in r['points']}
        membw = {int(k): v_ for k, v_ in r['membw'].items()}
        rounds.append((r, pts, membw))
    n = 0; tot = 0
    for row in j['rows']:
        t, algo, p, s = row['transport'], row['algo'], row['ranks'], row['size']
        ratios = []
        for r, pts, membw in rounds:
            us, ran = pts[(t, algo, p, s)]
            c = r['calib'][t]
            m = v.message_bytes(ran, s, p)
            t2 = c['chunked_us'][f'2:{s}:{m}']
            rate = s / max(1e-3, t2 - c['alpha_us'])
            params = v.params_line(t, c['alpha_us'], rate / 1e3, membw[s][1], 2)
            cg = 0.0
            if p > 2:
                f = v.oversub_factor(c['alpha_us'], c['sendrecv_us'][str(s)], c['sendrecv_p_us'][str(p)][str(s)], p, 2)
                cg = 2 * rate / 1e3 * f
            sim = v.simulate('build-lead', t, p, s, params, ran, 2, cg)[2]
            ratios.append(sim / us)
        med = v.median(ratios)
        ok = abs(med - 1) <= 0.25
        n += ok; tot += 1
        print(t, algo, p, s, f"{med:.2f}", "PASS" if ok else "MISS", f"(chunked col {row['msg_ratio']:.2f})")
    print(d, n, "of", tot)
