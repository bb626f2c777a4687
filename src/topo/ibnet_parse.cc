// ibnetdiscover text -> Fabric (default form and -p form). See ibnet.h.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "topo/fabric_builder.h"
#include "topo/ibnet.h"
#include "topo/ibnet_scan.h"

namespace loom::topo {

namespace {

using ibnet::Cursor;

constexpr int kMaxPort = 255;

// A node id as written: "S-<guid>" / "H-<guid>" / "R-<guid>" kept as (prefix, guid) so the
// common case needs no string; other ids (ibsim's "Switch1") as text.
struct NodeId {
  char prefix = 0;  // 'S', 'H', 'R' or 0 for a free-form id
  uint64_t guid = 0;
  std::string text;
  static NodeId of(const std::string& id) {
    NodeId n;
    if (ibnet::guidFromId(id, &n.guid) && id.size() == 18) {
      n.prefix = id[0];
    } else {
      n.text = id;
    }
    return n;
  }
  std::string str() const {
    if (!prefix) return text;
    char buf[24];
    std::snprintf(buf, sizeof(buf), "%c-%016llx", prefix, static_cast<unsigned long long>(guid));
    return buf;
  }
};

class IdMap {
 public:
  // Returns {index, inserted}.
  std::pair<int, bool> insert(const NodeId& id, int value) {
    if (id.prefix) {
      auto r = byGuid_[slot(id.prefix)].emplace(id.guid, value);
      return {r.first->second, r.second};
    }
    auto r = byText_.emplace(id.text, value);
    return {r.first->second, r.second};
  }
  int find(const NodeId& id) const {
    if (id.prefix) {
      const auto& m = byGuid_[slot(id.prefix)];
      auto it = m.find(id.guid);
      return it == m.end() ? -1 : it->second;
    }
    auto it = byText_.find(id.text);
    return it == byText_.end() ? -1 : it->second;
  }

 private:
  static int slot(char p) { return p == 'S' ? 0 : p == 'H' ? 1 : 2; }
  std::unordered_map<uint64_t, int> byGuid_[3];
  std::unordered_map<std::string, int> byText_;
};

struct HalfLink {
  int node;
  int port;
  NodeId peer;
  int peerPort;
  int width;
  std::string speed;
  int line;
};

class DefaultParser {
 public:
  DefaultParser(const std::string& src, IbnetReport* rep) : src_(src), rep_(rep) {}

  Status line(const char* b, const char* e, int lineNo) {
    lineNo_ = lineNo;
    Cursor c(b, e);
    c.ws();
    if (c.done()) {
      cur_ = -1;
      pendingGuid_ = 0;
      return Status();
    }
    if (c.peek() == '#') return Status();
    if (c.peek() == '[') return portLine(c);
    std::string word = c.word();
    if (word == "Switch" || word == "Ca" || word == "Hca" || word == "Rt") return nodeLine(c, word);
    if (word.find('=') != std::string::npos) return keyValue(word);
    if (word == "Non-Chassis" || std::string(b, e).find("Chassis") != std::string::npos) {
      return Status();  // -g headings
    }
    return err(
        "expected a node line (Switch/Ca/Rt <ports> \"<id>\"), a port line \"[n] ...\", "
        "key=value, a comment or a blank line; got \"",
        std::string(b, std::min(e, b + 60)), "\"");
  }

  Status finish(Fabric* out);

 private:
  template <typename... A>
  Status err(A&&... a) {
    return invalidArgument(src_, ":", lineNo_, ": ", std::forward<A>(a)...);
  }

  Status keyValue(const std::string& word) {
    size_t eq = word.find('=');
    std::string key = word.substr(0, eq);
    if (key == "switchguid" || key == "caguid" || key == "rtguid") {
      Cursor v(word.data() + eq + 1, word.data() + word.size());
      if (!v.hex(&pendingGuid_)) return err("expected ", key, "=0x<hex guid>");
    }
    return Status();  // vendid, devid, sysimgguid, ibsim's width= speed= ...: not needed
  }

  Status nodeLine(Cursor& c, const std::string& word) {
    int nports = 0;
    std::string id;
    c.ws();
    if (!c.integer(&nports) || nports < 0 || nports > kMaxPort) {
      return err("expected the port count (0..", kMaxPort, ") after \"", word, "\"");
    }
    c.ws();
    if (!c.quoted(&id) || id.empty())
      return err("expected the quoted node id after the port count");
    NodeKind kind = word == "Switch" ? NodeKind::kSwitch
                    : word == "Rt"   ? NodeKind::kRouter
                                     : NodeKind::kCa;
    std::string desc;
    int lid = 0;
    c.ws();
    if (c.peek() == '#') {
      c.skip(1);
      c.ws();
      if (c.peek() == '"' && !c.quoted(&desc)) return err("unterminated node description");
      c.findLid(&lid);
    }
    uint64_t guid = pendingGuid_;
    if (guid == 0) ibnet::guidFromId(id, &guid);
    if (guid == 0 && desc.empty()) desc = id;  // an ibsim net file's own name ("Switch1")
    pendingGuid_ = 0;
    auto [first, fresh] = ids_.insert(NodeId::of(id), b_.numNodes());
    if (!fresh) {
      return err("node \"", id, "\" is described twice (first at line ", line_[first], ")");
    }
    cur_ = b_.addNode(kind, guid, desc, nports, lid);
    line_.push_back(lineNo_);
    return Status();
  }

  Status portLine(Cursor& c) {
    if (cur_ < 0) return err("port line outside a node block (expected a Switch/Ca line first)");
    HalfLink h{cur_, 0, NodeId{}, 0, 4, "", lineNo_};
    c.skip(1);
    if (!c.integer(&h.port) || !c.lit(']') || h.port > kMaxPort) {
      return err("expected \"[<port 0..", kMaxPort, ">]\" at the start of a port line");
    }
    c.skipGuidAndExt();
    c.ws();
    std::string peer;
    if (!c.quoted(&peer) || peer.empty()) return err("expected the quoted peer node id");
    h.peer = NodeId::of(peer);
    if (!c.lit('[') || !c.integer(&h.peerPort) || !c.lit(']') || h.peerPort > kMaxPort) {
      return err("expected \"[<peer port>]\" after the peer id");
    }
    c.skipGuidAndExt();
    c.ws();
    if (!c.done() && c.peek() == '#') {
      int lid = 0;
      if (c.findLid(&lid) && b_.node(cur_).kind != NodeKind::kSwitch && b_.node(cur_).lid == 0) {
        b_.node(cur_).lid = lid;  // CA port line: "# lid <own lid> lmc ..."
      }
      c.findRate(&h.width, &h.speed);
    } else if (!c.done()) {
      return err("expected a \"# ...\" comment or the end of the line after the peer port");
    }
    halves_.push_back(std::move(h));
    return Status();
  }

  const std::string& src_;
  IbnetReport* rep_;
  FabricBuilder b_;
  IdMap ids_;
  std::vector<int> line_;  // per node: line of its node line
  std::vector<HalfLink> halves_;
  int cur_ = -1;
  uint64_t pendingGuid_ = 0;
  int lineNo_ = 0;
};

Status DefaultParser::finish(Fabric* out) {
  std::unordered_map<uint64_t, int> byPort;  // node * 256 + port -> link
  byPort.reserve(halves_.size());
  std::vector<char> both;
  int noRate = 0, unknownRate = 0, mismatch = 0, oneSided = 0;
  for (const HalfLink& h : halves_) {
    const int peer = ids_.find(h.peer);
    if (peer < 0) {
      lineNo_ = h.line;
      return err("port ", h.port, " of \"", b_.node(h.node).desc, "\" links to \"", h.peer.str(),
                 "\", which no node block describes (truncated output?)");
    }
    const uint64_t key = static_cast<uint64_t>(h.node) * 256 + h.port;
    const uint64_t pkey = static_cast<uint64_t>(peer) * 256 + h.peerPort;
    auto it = byPort.find(key);
    if (it != byPort.end()) {
      Link& l = b_.link(it->second);
      if (!(l.a == peer && l.portA == h.peerPort && l.b == h.node && l.portB == h.port)) {
        lineNo_ = h.line;
        return err("port ", h.port, " of \"", b_.node(h.node).desc, "\" is listed twice or its ",
                   "peer disagrees (peer \"", h.peer.str(), "\"[", h.peerPort, "])");
      }
      both[it->second] = 1;
      if (l.width != h.width || l.speed != h.speed) ++mismatch;
      continue;
    }
    if (byPort.count(pkey)) {
      lineNo_ = h.line;
      return err("port ", h.peerPort, " of \"", h.peer.str(), "\" is already linked elsewhere");
    }
    std::string speed = h.speed;
    if (speed.empty()) {
      ++noRate;
      speed = "SDR";
    } else if (laneGbps(speed) == 0) {
      ++unknownRate;
      speed = "XDR";  // infiniband-diags 44 prints ??? for rates newer than NDR
    }
    int li = b_.addLink(h.node, h.port, peer, h.peerPort, h.width, speed);
    byPort[key] = li;
    byPort[pkey] = li;
    both.push_back(h.node == peer ? 1 : 0);
  }
  for (char c : both) oneSided += c ? 0 : 1;
  if (rep_) {
    if (oneSided) rep_->notes.push_back(strCat(oneSided, " links are listed at one end only"));
    if (mismatch)
      rep_->notes.push_back(strCat(mismatch, " links report different rates at their two ends"));
    if (noRate)
      rep_->notes.push_back(strCat(noRate, " links carry no width/speed (taken as 4xSDR)"));
    if (unknownRate) {
      rep_->notes.push_back(strCat(unknownRate, " links report an unknown speed (taken as XDR)"));
    }
  }
  *out = b_.finish("ibnetdiscover:" + src_);
  return Status();
}

// -p form: "CA 13 1 0x<guid> 4x HDR - SW 3 1 0x<guid> ( 'a' - 'b' )" or an unconnected port
// "SW 3 4 0x<guid> 4x SDR 'desc'". CAs are identified by their port GUID.
class PortParser {
 public:
  PortParser(const std::string& src) : src_(src) {}

  Status line(const char* b, const char* e, int lineNo) {
    lineNo_ = lineNo;
    Cursor c(b, e);
    c.ws();
    if (c.done() || c.peek() == '#') return Status();
    End self;
    LOOM_CHECK(end(c, &self));
    int width = 4;
    std::string speed;
    c.ws();
    std::string w = c.word();
    c.ws();
    speed = c.word();
    if (w.size() < 2 || w.back() != 'x' || !ibnet::parseInt(w.substr(0, w.size() - 1), &width)) {
      width = 4;  // "??" when unknown
    }
    c.ws();
    if (c.peek() != '-') {
      std::string desc;
      if (c.peek() == '\'') c.quoted(&desc, '\'');
      node(self, desc);
      return Status();
    }
    c.skip(1);
    End peer;
    LOOM_CHECK(end(c, &peer));
    c.ws();
    std::string descA, descB;
    if (!c.lit('(')) return err("expected \"( '<desc>' - '<peer desc>' )\" after the peer");
    c.ws();
    if (!c.quoted(&descA, '\'')) return err("expected the quoted local description");
    c.ws();
    if (!c.lit('-')) return err("expected \" - \" between the descriptions");
    c.ws();
    if (!c.quoted(&descB, '\'')) return err("expected the quoted peer description");
    int a = node(self, descA), bb = node(peer, descB);
    uint64_t ka = static_cast<uint64_t>(a) * 256 + self.port;
    if (!seen_.count(ka)) {
      if (laneGbps(speed) == 0) speed = speed.empty() ? "SDR" : "XDR";
      int li = b_.addLink(a, self.port, bb, peer.port, width, speed);
      seen_[ka] = li;
      seen_[static_cast<uint64_t>(bb) * 256 + peer.port] = li;
    }
    return Status();
  }

  Status finish(Fabric* out) {
    *out = b_.finish("ibnetdiscover-p:" + src_);
    return Status();
  }

 private:
  struct End {
    NodeKind kind;
    int lid = 0, port = 0;
    uint64_t guid = 0;
  };
  template <typename... A>
  Status err(A&&... a) {
    return invalidArgument(src_, ":", lineNo_, ": ", std::forward<A>(a)...);
  }
  Status end(Cursor& c, End* e) {
    c.ws();
    std::string kind = c.word();
    if (kind == "SW") {
      e->kind = NodeKind::kSwitch;
    } else if (kind == "CA") {
      e->kind = NodeKind::kCa;
    } else if (kind == "RT") {
      e->kind = NodeKind::kRouter;
    } else {
      return err("expected SW, CA or RT, got \"", kind, "\"");
    }
    c.ws();
    if (!c.integer(&e->lid)) return err("expected a LID after ", kind);
    c.ws();
    if (!c.integer(&e->port) || e->port > kMaxPort) return err("expected a port number 0..255");
    c.ws();
    if (!c.hex(&e->guid)) return err("expected a 0x<guid> after the port number");
    return Status();
  }
  int node(const End& e, const std::string& desc) {
    auto [it, fresh] = byGuid_.emplace(e.guid, b_.numNodes());
    if (fresh) b_.addNode(e.kind, e.guid, desc, 0, e.lid);
    FabricNode& n = b_.node(it->second);
    n.nports = std::max(n.nports, e.port);
    if (n.desc.empty()) n.desc = desc;
    return it->second;
  }

  const std::string& src_;
  FabricBuilder b_;
  std::unordered_map<uint64_t, int> byGuid_;
  std::unordered_map<uint64_t, int> seen_;
  int lineNo_ = 0;
};

template <typename P>
Status runLines(P* p, const std::string& text, int* lines) {
  const char* b = text.data();
  const char* end = b + text.size();
  int n = 0;
  while (b < end) {
    const char* e = static_cast<const char*>(std::memchr(b, '\n', end - b));
    if (!e) e = end;
    const char* le = (e > b && e[-1] == '\r') ? e - 1 : e;
    LOOM_CHECK(p->line(b, le, ++n));
    b = e + 1;
  }
  *lines = n;
  return Status();
}

}  // namespace

Status parseIbnetdiscover(const std::string& text, const std::string& source, Fabric* out,
                          IbnetReport* report) {
  IbnetReport local;
  IbnetReport* rep = report ? report : &local;
  rep->portForm = ibnet::looksLikePortForm(text);
  if (text.find('\0') != std::string::npos) {
    return invalidArgument(source, ": binary data (NUL byte) in ibnetdiscover text");
  }
  if (rep->portForm) {
    PortParser p(source);
    LOOM_CHECK(runLines(&p, text, &rep->lines));
    return p.finish(out);
  }
  DefaultParser p(source, rep);
  LOOM_CHECK(runLines(&p, text, &rep->lines));
  return p.finish(out);
}

Status loadIbnetdiscoverFile(const std::string& path, Fabric* out, IbnetReport* report) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errnoStatus("cannot open ibnetdiscover file " + path, errno);
  std::stringstream ss;
  ss << in.rdbuf();
  return parseIbnetdiscover(ss.str(), path, out, report);
}

}  // namespace loom::topo
