// ibnetdiscover parser on text as infiniband-diags 44 prints it (samples captured against ibsim
// on these machines), its -p and -g/-f variants, and malformed input.
#include <gtest/gtest.h>

#include <algorithm>

#include "topo/classify.h"
#include "topo/ibnet.h"
#include "topo/synth/synth.h"

namespace loom::topo {
namespace {

// 1 spine, 2 leaves, 3 HCAs; -g -f -m output (chassis heading, s= w= v= fields, header lines).
const char* kDefault = R"(#
# Topology file: generated on Mon Nov 30 12:24:07 2026
#
# Reported max hops discovered: 2
# Total MADs used: 33
# Initiated from node 0c42a10300b00001 port 0c42a10300b00001

Non-Chassis Nodes

vendid=0x0
devid=0xd2f0
sysimgguid=0xc42a10300b00003
switchguid=0xc42a10300b00003(c42a10300b00003)	# 
Switch	4 "S-0c42a10300b00003"		# "leaf02 Quantum" enhanced port 0 lid 3 lmc 0
[1]	"H-b8cef60300003000"[1](b8cef60300003001) 		# "node03 mlx5_0" lid 13 4xHDR s=4 w=2 v=4
[3]	"S-0c42a10300b00001"[2]		# "spine01 Quantum" lid 1 4xHDR s=4 w=2 v=4

vendid=0x0
devid=0xd2f0
sysimgguid=0xc42a10300b00002
switchguid=0xc42a10300b00002(c42a10300b00002)	# 
Switch	4 "S-0c42a10300b00002"		# "leaf01 Quantum" enhanced port 0 lid 2 lmc 0
[1]	"H-b8cef60300001000"[1](b8cef60300001001) 		# "node01 mlx5_0" lid 11 4xHDR s=4 w=2 v=4
[2]	"H-b8cef60300002000"[1](b8cef60300002001) 		# "node02 mlx5_0" lid 12 4xHDR s=4 w=2 v=4
[3]	"S-0c42a10300b00001"[1]		# "spine01 Quantum" lid 1 4xHDR s=4 w=2 v=4

vendid=0x2c9
devid=0xd2f0
sysimgguid=0xc42a10300b00001
switchguid=0xc42a10300b00001(c42a10300b00001)	# 
Switch	4 "S-0c42a10300b00001"		# "spine01 Quantum" enhanced port 0 lid 1 lmc 0
[1]	"S-0c42a10300b00002"[3]		# "leaf01 Quantum" lid 2 4xHDR s=4 w=2 v=4
[2]	"S-0c42a10300b00003"[3]		# "leaf02 Quantum" lid 3 4xHDR s=4 w=2 v=4

vendid=0x0
devid=0x101b
sysimgguid=0xb8cef60300003000
caguid=0xb8cef60300003000
Ca	1 "H-b8cef60300003000"		# "node03 mlx5_0"
[1](b8cef60300003001) 	"S-0c42a10300b00003"[1]		# lid 13 lmc 0 "leaf02 Quantum" lid 3 4xHDR s=4 w=2 v=4

vendid=0x0
devid=0x101b
sysimgguid=0xb8cef60300002000
caguid=0xb8cef60300002000
Ca	1 "H-b8cef60300002000"		# "node02 mlx5_0"
[1](b8cef60300002001) 	"S-0c42a10300b00002"[2]		# lid 12 lmc 0 "leaf01 Quantum" lid 2 4xHDR s=4 w=2 v=4

vendid=0x0
devid=0x101b
sysimgguid=0xb8cef60300001000
caguid=0xb8cef60300001000
Ca	1 "H-b8cef60300001000"		# "node01 mlx5_0"
[1](b8cef60300001001) 	"S-0c42a10300b00002"[1]		# lid 11 lmc 0 "leaf01 Quantum" lid 2 4xHDR s=4 w=2 v=4
)";

const char* kPortForm =
    R"(CA    13  1 0xb8cef60300003001 4x HDR - SW     3  1 0x0c42a10300b00003 ( 'node03 mlx5_0' - 'leaf02 Quantum' )
CA    12  1 0xb8cef60300002001 4x HDR - SW     2  2 0x0c42a10300b00002 ( 'node02 mlx5_0' - 'leaf01 Quantum' )
CA    11  1 0xb8cef60300001001 4x HDR - SW     2  1 0x0c42a10300b00002 ( 'node01 mlx5_0' - 'leaf01 Quantum' )
SW     3  4 0x0c42a10300b00003 4x SDR                                    'leaf02 Quantum'
SW     3  3 0x0c42a10300b00003 4x HDR - SW     1  2 0x0c42a10300b00001 ( 'leaf02 Quantum' - 'spine01 Quantum' )
SW     3  2 0x0c42a10300b00003 4x SDR                                    'leaf02 Quantum'
SW     3  1 0x0c42a10300b00003 4x HDR - CA    13  1 0xb8cef60300003001 ( 'leaf02 Quantum' - 'node03 mlx5_0' )
SW     2  4 0x0c42a10300b00002 4x SDR                                    'leaf01 Quantum'
SW     2  3 0x0c42a10300b00002 4x HDR - SW     1  1 0x0c42a10300b00001 ( 'leaf01 Quantum' - 'spine01 Quantum' )
SW     2  2 0x0c42a10300b00002 4x HDR - CA    12  1 0xb8cef60300002001 ( 'leaf01 Quantum' - 'node02 mlx5_0' )
SW     2  1 0x0c42a10300b00002 4x HDR - CA    11  1 0xb8cef60300001001 ( 'leaf01 Quantum' - 'node01 mlx5_0' )
SW     1  4 0x0c42a10300b00001 4x SDR                                    'spine01 Quantum'
SW     1  3 0x0c42a10300b00001 4x SDR                                    'spine01 Quantum'
SW     1  2 0x0c42a10300b00001 4x HDR - SW     3  3 0x0c42a10300b00003 ( 'spine01 Quantum' - 'leaf02 Quantum' )
SW     1  1 0x0c42a10300b00001 4x HDR - SW     2  3 0x0c42a10300b00002 ( 'spine01 Quantum' - 'leaf01 Quantum' )
)";

void expectSmallTree(const Topology& t) {
  const Fabric& f = t.fabric;
  EXPECT_EQ(f.numSwitches, 3);
  EXPECT_EQ(f.numNodes(), 6);
  EXPECT_EQ(f.links.size(), 5u);
  EXPECT_EQ(t.cls.type, FabricType::kFatTree);
  EXPECT_EQ(t.cls.levels, 2);
  EXPECT_EQ(t.hosts.size(), 3u);
  for (const Link& l : f.links) EXPECT_DOUBLE_EQ(l.gbps, 25.0);
  bool sawSpine = false;
  for (const FabricNode& n : f.nodes) {
    if (n.desc == "spine01 Quantum") {
      sawSpine = true;
      EXPECT_EQ(n.role, Role::kSpine);
      EXPECT_EQ(n.guid, 0x0c42a10300b00001ULL);
      EXPECT_EQ(n.lid, 1);
    }
  }
  EXPECT_TRUE(sawSpine);
}

TEST(IbnetParse, DefaultFormWithChassisAndFields) {
  Topology t;
  IbnetReport rep;
  Status s = parseIbnetdiscover(kDefault, "sample.txt", &t.fabric, &rep);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(rep.portForm);
  EXPECT_TRUE(rep.notes.empty());
  classify(&t);
  expectSmallTree(t);
  for (const FabricNode& n : t.fabric.nodes) {
    if (n.desc == "node02 mlx5_0") {
      EXPECT_EQ(n.lid, 12);
    }
  }
}

TEST(IbnetParse, PortForm) {
  Topology t;
  IbnetReport rep;
  Status s = parseIbnetdiscover(kPortForm, "p.txt", &t.fabric, &rep);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(rep.portForm);
  classify(&t);
  expectSmallTree(t);
}

TEST(IbnetParse, WriterOutputParsesBackIdentically) {
  Topology t;
  ASSERT_TRUE(synth::generateFromSpec("dragonfly:groups=4", &t).ok());
  Fabric f;
  ASSERT_TRUE(parseIbnetdiscover(writeIbnetdiscover(t.fabric), "w", &f).ok());
  std::string a = writeIbnetdiscover(f), b = writeIbnetdiscover(t.fabric);
  EXPECT_EQ(a.substr(a.find("vendid")), b.substr(b.find("vendid")));
  EXPECT_TRUE(missingLinks(t.fabric, f).empty());
}

Status parse(const std::string& text) {
  Fabric f;
  return parseIbnetdiscover(text, "in.txt", &f);
}

TEST(IbnetParse, ErrorsNameLineAndExpectation) {
  std::string s = kDefault;
  // Truncated in the middle of a port line.
  size_t cut = s.find("[2]\t\"H-b8cef60300002000\"") + 12;
  int line = 1 + static_cast<int>(std::count(s.begin(), s.begin() + cut, '\n'));
  Status st = parse(s.substr(0, cut));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("in.txt:" + std::to_string(line) + ": expected the quoted peer"),
            std::string::npos)
      << st.message();
  // Truncated at a block boundary: a peer that no block describes.
  st = parse(s.substr(0, s.find("vendid=0x0\ndevid=0x101b")));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("truncated"), std::string::npos) << st.message();
  st = parse("Switch\tfour \"S-1\"\n");
  EXPECT_NE(st.message().find("in.txt:1: expected the port count"), std::string::npos)
      << st.message();
  st = parse("garbage here\n");
  EXPECT_NE(st.message().find("in.txt:1: expected a node line"), std::string::npos);
  st = parse("[1]\t\"S-1\"[1]\n");
  EXPECT_NE(st.message().find("outside a node block"), std::string::npos);
  st = parse("Switch\t4 \"S-1\"\n[1]\t\"S-2\"[1]\n\nSwitch\t4 \"S-1\"\n");
  EXPECT_NE(st.message().find("in.txt:4: node \"S-1\" is described twice (first at line 1)"),
            std::string::npos)
      << st.message();
  st = parse("SW 1 1 0x1 4x HDR - XX 2 1 0x2 ( 'a' - 'b' )\n");
  EXPECT_NE(st.message().find("in.txt:1: expected SW, CA or RT"), std::string::npos);
  st = parse("Switch\t4 \"S-1\"\n[999]\t\"S-2\"[1]\n");
  EXPECT_NE(st.message().find("in.txt:2:"), std::string::npos);
}

TEST(IbnetParse, IbsimShortFormAndUnknownSpeed) {
  Fabric f;
  IbnetReport rep;
  Status st = parseIbnetdiscover(
      "Switch 8 \"Switch1\"\n[1] \"Hca1\"[1]\t# \"h\" lid 2 4x???\n\nHca 1 \"Hca1\"\n[1] "
      "\"Switch1\"[1]\n",
      "short", &f, &rep);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(f.links.size(), 1u);
  EXPECT_EQ(f.links[0].speed, "XDR");
  EXPECT_EQ(rep.notes.size(), 2u);  // rates differ at the two ends; unknown speed
}

}  // namespace
}  // namespace loom::topo
