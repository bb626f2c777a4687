# Per half of a slice trace: how many work events ran with both ranks last seen on the same CPU.
# per phase: fraction of work time (S/D/C) in which the two ranks' last-known cpus coincide
import sys
ev=[]
for r in (0,1):
    for l in open(f'{sys.argv[1]}.{r}'):
        k,a,b,n,c=l.split(); ev.append((int(a),int(b),r,k,int(n),int(c)))
ev.sort()
half=len(ev)//2
for name,seg in (("first half",ev[:half]),("second half",ev[half:])):
    last=[None,None]; same=0; tot=0; busy=[0,0]
    for a,b,r,k,n,c in seg:
        last[r]=c
        if k in 'SDC':
            tot+=1; same+= last[0]==last[1]
            busy[r]+=b-a
    span=seg[-1][1]-seg[0][0]
    print(name, f"events on same cpu {same}/{tot}", f"busy r0 {busy[0]/span:.2f} r1 {busy[1]/span:.2f}")
