/* Elastic data-parallel training on loom's public API: survive a lost rank and finish exactly.
 *
 *   elastic_trainer [nranks=8] [steps=20] [kill_rank=5] [kill_step=10]
 *
 * The program launches nranks processes itself (fork), as a job launcher would. Every step, the
 * ranks split the step's samples between them, each sums the gradients of its samples, and an
 * all-reduce adds the partial sums; the model then takes the step. At step kill_step, rank
 * kill_rank is SIGKILLed while the others are in the all-reduce. The survivors see the error
 * (naming the dead rank), agree on who failed, shrink the communicator to themselves (no new
 * rendezvous), split the samples between the ranks that remain and redo the step. At the end every
 * survivor compares the model with a sequential computation of the same steps: gradients are
 * small integers, so the result must be bit-exact. kill_rank -1 runs without a failure.
 */
#include <loom/loom.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kWidth = 1024, kSamplesPerStep = 4000 };

/* Gradient of one sample for one weight: an integer in [-8, 8]. */
static float gradient(int step, int sample, int j) {
  return (float)((sample * 31 + j * 7 + step * 13) % 17 - 8);
}

static double nowSeconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The partial gradient sum of this rank's share of a step's samples. */
static void localGradient(int step, int rank, int nranks, float* grad) {
  int first = (int)((int64_t)kSamplesPerStep * rank / nranks);
  int last = (int)((int64_t)kSamplesPerStep * (rank + 1) / nranks);
  for (int j = 0; j < kWidth; ++j) grad[j] = 0;
  for (int s = first; s < last; ++s)
    for (int j = 0; j < kWidth; ++j) grad[j] += gradient(step, s, j);
}

/* One rank's training loop. Returns 0 when its final model is exact. */
static int train(loomComm_t comm, int worldRank, int steps, int killRank, int killStep) {
  static float model[kWidth], grad[kWidth];
  int rank, nranks;
  loomCommUserRank(comm, &rank);
  loomCommCount(comm, &nranks);
  for (int step = 0; step < steps;) {
    if (worldRank == killRank && step == killStep) raise(SIGKILL);
    localGradient(step, rank, nranks, grad);
    double t0 = nowSeconds();
    loomResult_t r = loomAllReduce(grad, grad, kWidth, loomFloat32, loomSum, comm, NULL);
    if (r == loomSuccess) {
      for (int j = 0; j < kWidth; ++j) model[j] += grad[j];
      ++step;
      continue;
    }
    /* A peer failed: every survivor gets an error naming it. Agree, shrink, redo the step. */
    double detected = nowSeconds() - t0;
    int failed[64], nfailed = 0;
    loomCommAgreeFailedRanks(comm, failed, 64, &nfailed);
    loomComm_t smaller = NULL;
    double t1 = nowSeconds();
    if (loomCommShrink(comm, NULL, 0, &smaller) != loomSuccess) {
      fprintf(stderr, "rank %d: shrink failed: %s\n", worldRank, loomGetLastError(comm));
      return 1;
    }
    double shrunk = nowSeconds() - t1;
    int newRank, newSize;
    loomCommUserRank(smaller, &newRank);
    loomCommCount(smaller, &newSize);
    if (newRank == 0)
      printf(
          "step %d: all-reduce failed after %.2f s: %s\n"
          "step %d: %d failed rank(s), first %d; shrank %d -> %d ranks in %.0f ms; "
          "%d samples per rank now\n",
          step, detected, loomGetLastError(comm), step, nfailed, nfailed ? failed[0] : -1, nranks,
          newSize, shrunk * 1e3, kSamplesPerStep / newSize);
    loomCommDestroy(comm);
    comm = smaller;
    rank = newRank;
    nranks = newSize;
  }
  /* The same steps, sequentially, over all samples. */
  long wrong = 0;
  for (int j = 0; j < kWidth; ++j) {
    int64_t want = 0;
    for (int step = 0; step < steps; ++step)
      for (int s = 0; s < kSamplesPerStep; ++s) want += (int64_t)gradient(step, s, j);
    wrong += (double)model[j] != (double)want;
  }
  if (rank == 0 || wrong)
    printf("rank %d of %d (started as %d): %d steps, model %s (%ld of %d weights differ)\n", rank,
           nranks, worldRank, steps, wrong ? "WRONG" : "exact", wrong, kWidth);
  loomCommDestroy(comm);
  return wrong ? 1 : 0;
}

int main(int argc, char** argv) {
  int nranks = argc > 1 ? atoi(argv[1]) : 8;
  int steps = argc > 2 ? atoi(argv[2]) : 20;
  int killRank = argc > 3 ? atoi(argv[3]) : 5;
  int killStep = argc > 4 ? atoi(argv[4]) : 10;
  if (nranks < 2 || nranks > 64 || steps < 1 || killRank >= nranks) {
    fprintf(stderr, "usage: %s [nranks 2..64] [steps >= 1] [kill_rank < nranks] [kill_step]\n",
            argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("elastic_trainer: %d ranks, %d steps of %d samples, %d weights; rank %d dies at step %d\n",
         nranks, steps, kSamplesPerStep, kWidth, killRank, killStep);
  int idPipe[2];
  if (pipe(idPipe) != 0) return 2;
  pid_t pids[64];
  for (int r = 0; r < nranks; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) {
      loomUniqueId id;
      loomComm_t comm;
      /* Rank 0 makes the id and hands it to the others, as mpirun or torchrun would. */
      if (r == 0) {
        if (loomGetUniqueId(&id) != loomSuccess) _exit(3);
        for (int i = 1; i < nranks; ++i)
          if (write(idPipe[1], &id, sizeof(id)) != (ssize_t)sizeof(id)) _exit(3);
      } else if (read(idPipe[0], &id, sizeof(id)) != (ssize_t)sizeof(id)) {
        _exit(3);
      }
      if (loomCommInitRank(&comm, nranks, id, r) != loomSuccess) {
        fprintf(stderr, "rank %d: init failed: %s\n", r, loomGetLastError(NULL));
        _exit(4);
      }
      _exit(train(comm, r, steps, killRank, killStep));
    }
  }
  int bad = 0;
  for (int r = 0; r < nranks; ++r) {
    int status = 0;
    waitpid(pids[r], &status, 0);
    int killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    int victim = r == killRank && killStep >= 0 && killStep < steps;
    if (victim ? !killed : !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) bad = 1;
  }
  printf("elastic_trainer: %s\n", bad ? "FAILED" : "all survivors finished with the exact model");
  return bad;
}
