// The UCX transport's registration cache against a real UCP context: hits for reused buffers,
// invalidation when memory is unmapped and mapped again at the same address, the bound, and held
// entries surviving both eviction and invalidation until released.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <vector>

#include "transports/ucx/reg_cache.h"

namespace loom::transport::ucx {
namespace {

constexpr size_t kBytes = 1 << 20;

class RegCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ucp_config_t* cfg = nullptr;
    ASSERT_EQ(ucp_config_read(nullptr, nullptr, &cfg), UCS_OK);
    ucp_params_t p{};
    p.field_mask = UCP_PARAM_FIELD_FEATURES;
    p.features = UCP_FEATURE_TAG;
    ASSERT_EQ(ucp_init(&p, cfg, &ctx_), UCS_OK);
    ucp_config_release(cfg);
  }
  void TearDown() override {
    if (ctx_ != nullptr) ucp_cleanup(ctx_);
  }
  static void* map(void* at = nullptr) {
    void* p = mmap(at, kBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  ucp_context_h ctx_ = nullptr;
};

TEST_F(RegCacheTest, ReusedBufferHitsAndSmallOnesAreNotRegistered) {
  RegCache c(ctx_, 4, 4096);
  ASSERT_TRUE(c.stats().enabled) << "UCX memory events unavailable";
  void* a = map();
  ASSERT_NE(a, nullptr);
  RegCache::Entry* e = c.acquire(a, kBytes);
  ASSERT_NE(e, nullptr);
  c.release(e);
  EXPECT_EQ(c.acquire(a, kBytes), e);
  c.release(e);
  EXPECT_EQ(c.acquire(static_cast<char*>(a) + 8192, 65536), e) << "a sub-range hits";
  c.release(e);
  EXPECT_EQ(c.acquire(a, 100), nullptr) << "below minBytes";
  EXPECT_EQ(c.stats().misses, 1u);
  EXPECT_EQ(c.stats().hits, 2u);
  munmap(a, kBytes);
}

TEST_F(RegCacheTest, UnmapAndRemapAtTheSameAddressInvalidates) {
  RegCache c(ctx_, 4, 4096);
  void* a = map();
  ASSERT_NE(a, nullptr);
  c.release(c.acquire(a, kBytes));
  ASSERT_EQ(munmap(a, kBytes), 0);
  void* b = map(a);
  ASSERT_EQ(b, a) << "could not map again at the same address";
  RegCache::Entry* e = c.acquire(b, kBytes);
  ASSERT_NE(e, nullptr);
  c.release(e);
  EXPECT_EQ(c.stats().invalidated, 1u);
  EXPECT_EQ(c.stats().misses, 2u);
  EXPECT_EQ(c.stats().hits, 0u);
  EXPECT_EQ(c.stats().entries, 1u);
  munmap(b, kBytes);
}

TEST_F(RegCacheTest, BoundedAndHeldEntriesStay) {
  RegCache c(ctx_, 4, 4096);
  std::vector<void*> bufs;
  for (int i = 0; i < 10; ++i) bufs.push_back(map());
  for (void* b : bufs) c.release(c.acquire(b, kBytes));
  EXPECT_EQ(c.stats().entries, 4u);
  EXPECT_EQ(c.stats().evictions, 6u);
  // Four held entries fill the cache: a fifth buffer is not registered (UCX registers it).
  std::vector<RegCache::Entry*> held;
  for (int i = 0; i < 4; ++i) held.push_back(c.acquire(bufs[i], kBytes));
  for (auto* e : held) ASSERT_NE(e, nullptr);
  EXPECT_EQ(c.acquire(bufs[9], kBytes), nullptr);
  // A held entry whose memory goes away is never handed out again and is dropped on release.
  munmap(bufs[0], kBytes);
  bufs[0] = map(held[0] ? reinterpret_cast<void*>(held[0]->begin) : nullptr);
  RegCache::Entry* again = c.acquire(bufs[1], kBytes);  // drains the unmap events
  EXPECT_EQ(again, held[1]);
  c.release(again);
  EXPECT_EQ(c.stats().invalidated, 1u);
  EXPECT_EQ(c.stats().entries, 4u);
  c.release(held[0]);
  EXPECT_EQ(c.stats().entries, 3u);
  for (int i = 1; i < 4; ++i) c.release(held[i]);
  for (void* b : bufs)
    if (b != nullptr) munmap(b, kBytes);
}

}  // namespace
}  // namespace loom::transport::ucx
