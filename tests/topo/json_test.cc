// Topology JSON: exact round trips, LOOM_TOPO_FILE / LOOM_TOPO_DUMP_FILE, and errors that name
// the file, line or JSON path.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "core/params.h"
#include "topo/classify.h"
#include "topo/discover.h"
#include "topo/ibnet.h"
#include "topo/node.h"
#include "topo/synth/synth.h"

namespace loom::topo {
namespace {

const std::string kFixtures = LOOM_TOPO_FIXTURES;

Topology sample() {
  Topology t;
  EXPECT_TRUE(synth::generateFromSpec("dragonfly:groups=4,hostsPerLeaf=3", &t).ok());
  classify(&t);
  if (haveHwloc()) {
    Host h;
    EXPECT_TRUE(probeHost(kFixtures + "/nvidiaDGX2.xml", &h).ok());
    t.hosts.push_back(h);
    EXPECT_TRUE(probeHost(kFixtures + "/32em64t-2n8c2t-pci-normalio.xml", &h).ok());
    t.hosts.push_back(h);
  }
  t.fabric.links[3].up = false;  // every field, including the rarely set ones
  t.fabric.links[5].gbps = 0.1 + 0.2;
  return t;
}

TEST(Json, RoundTripIsExact) {
  Topology t = sample();
  std::string text = toJson(t);
  Topology u;
  Status s = fromJson(text, &u, "mem");
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(u == t);
  EXPECT_EQ(toJson(u), text);
  EXPECT_EQ(toJson(u, -1), toJson(t, -1));
  Topology fat;
  ASSERT_TRUE(synth::generateFromSpec("fat-tree:levels=3,pods=2,cores=8,rails=2", &fat).ok());
  classify(&fat);
  ASSERT_TRUE(fromJson(toJson(fat), &u).ok());
  EXPECT_TRUE(u == fat);
}

TEST(Json, SyntaxErrorNamesLine) {
  Topology u;
  Status s = fromJson("{\n \"loomTopology\": 1,\n \"hosts\": [,]\n}\n", &u, "bad.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad.json:3:"), std::string::npos) << s.message();
  s = fromJson(toJson(sample()).substr(0, 500), &u, "cut.json");  // truncated
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cut.json:"), std::string::npos) << s.message();
}

TEST(Json, SchemaErrorNamesPath) {
  Topology u;
  Status s = fromJson(R"({"loomTopology":1,"hosts":[{"name":"a","cores":"many"}]})", &u, "x.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("x.json: at /hosts/0/cores"), std::string::npos) << s.message();
  s = fromJson(R"({"loomTopology":1,"fabric":{"nodes":[],"links":[{"a":0,"b":1}]}})", &u, "y");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("link 0"), std::string::npos) << s.message();
  // Found by fuzz_json: 2e80 converted to int was undefined behaviour; now an error.
  s = fromJson(R"({"loomTopology":1,"hosts":[{"cores":2e80}]})", &u, "big.json");
  EXPECT_NE(s.message().find("big.json: at /hosts/0/cores: expected an integer"), std::string::npos)
      << s.message();
  s = fromJson(R"({"loomTopology":1,"fabric":{"nodes":[],"links":[{"a":4294967296,"b":0}]}})", &u,
               "wide");
  EXPECT_NE(s.message().find("/fabric/links/0/a"), std::string::npos) << s.message();
  s = fromJson(R"({"hosts":[]})", &u, "z");
  EXPECT_NE(s.message().find("loomTopology"), std::string::npos) << s.message();
  s = fromJson(R"({"loomTopology":1,"fabric":{"nodes":[{"kind":"hub"}],"links":[]}})", &u, "k");
  EXPECT_NE(s.message().find("/fabric/nodes/0/kind"), std::string::npos) << s.message();
}

TEST(Json, TopoFileAndDumpFileParams) {
  Topology t = sample();
  std::string in = ::testing::TempDir() + "/loom_topo_in.json";
  std::string dump = ::testing::TempDir() + "/loom_topo_dump.json";
  ASSERT_TRUE(writeTopologyFile(in, t).ok());
  setenv("LOOM_TOPO_FILE", in.c_str(), 1);
  setenv("LOOM_TOPO_DUMP_FILE", dump.c_str(), 1);
  params::resetCacheForTesting();
  Topology got;
  Status s = discoverTopology(DiscoverOptions{}, &got);
  unsetenv("LOOM_TOPO_FILE");
  unsetenv("LOOM_TOPO_DUMP_FILE");
  params::resetCacheForTesting();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(got == t);
  Topology dumped;
  ASSERT_TRUE(loadTopologyFile(dump, &dumped).ok());
  EXPECT_TRUE(dumped == t);
  std::remove(in.c_str());
  std::remove(dump.c_str());
}

TEST(Json, DiscoverFromIbTopoFileAndXml) {
  if (!haveHwloc()) GTEST_SKIP() << "built without hwloc";
  Topology gen;
  ASSERT_TRUE(synth::generateFromSpec("fat-tree:hostsPerLeaf=4,spinesPerPod=2", &gen).ok());
  std::string ib = ::testing::TempDir() + "/loom_ib.txt";
  std::ofstream(ib) << writeIbnetdiscover(gen.fabric);
  setenv("LOOM_IB_TOPO_FILE", ib.c_str(), 1);
  setenv("LOOM_HWLOC_XML", (kFixtures + "/32em64t-2n8c2t-pci-normalio.xml").c_str(), 1);
  params::resetCacheForTesting();
  Topology t;
  Status s = discoverTopology(DiscoverOptions{}, &t);
  unsetenv("LOOM_IB_TOPO_FILE");
  unsetenv("LOOM_HWLOC_XML");
  params::resetCacheForTesting();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(t.cls.type, FabricType::kFatTree);
  EXPECT_DOUBLE_EQ(t.cls.perLevel.at(0).oversubscription, 2.0);
  ASSERT_EQ(t.hosts.size(), 17u);  // the XML's host "conan" + 16 fabric hosts
  EXPECT_EQ(t.hosts[0].name, "conan");
  EXPECT_EQ(t.hosts[0].gpus.size(), 4u);
  std::remove(ib.c_str());
}

}  // namespace
}  // namespace loom::topo
