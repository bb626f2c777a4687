# Merges two ranks' slice traces (LOOM_SLICE_TRACE=PREFIX, instrumentation.patch) and prints N events from START.
import sys
ev=[]
for r in (0,1):
    for l in open(f'{sys.argv[1]}.{r}'):
        k,a,b,n,c=l.split(); ev.append((int(a),int(b),r,k,int(n),int(c)))
ev.sort()
t0=ev[0][0]
start=int(sys.argv[2]); cnt=int(sys.argv[3])
for a,b,r,k,n,c in ev[start:start+cnt]:
    print(f"{(a-t0)/1000:10.1f} {(b-a)/1000:7.1f} {'r0' if r==0 else '            r1'} {k} {n} cpu{c}")
