#include <stdio.h>
#include <time.h>
#include <string.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(){ static char a[1<<20], b[1<<20]; memset(a,1,sizeof a); double best=1e9, sum=0;
 for(int s=0;s<10;s++){ double t=now(); for(int i=0;i<50;i++){memcpy(b,a,sizeof a); a[i]^=b[i+1];} double d=now()-t; sum+=d; if(d<best)best=d;}
 printf("%.3f\n", sum/10); return a[5] & 0;}
