// ibnetdiscover text <-> Fabric.
//
// Reading accepts the default output of infiniband-diags' ibnetdiscover (node blocks; also with
// -g chassis headings, -f "s= w= v=" fields, -m header lines, -s), the -p port-per-line form, and
// ibsim net files in the same syntax (short node names such as "Switch1"). The form is detected
// from the first non-comment line. Each link is listed at both ends; both halves are merged and
// checked. Errors name the source, the line and what was expected.
//
// Writing produces the default form. ibsim reads the same text as a net file (keep <= 256
// switches and speeds <= HDR for ibsim 0.10); larger fabrics are written the same way as a
// ready-made "ibnetdiscover dump".
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "topo/topology.h"

namespace loom::topo {

struct IbnetReport {
  bool portForm = false;  // input was the -p form
  int lines = 0;
  std::vector<std::string> notes;  // oddities of the text (one-sided links, duplicates ...)
};

Status parseIbnetdiscover(const std::string& text, const std::string& source, Fabric* out,
                          IbnetReport* report = nullptr);
Status loadIbnetdiscoverFile(const std::string& path, Fabric* out, IbnetReport* report = nullptr);

// Default-form text of `f` (down links are left out, as ibnetdiscover would not see them).
std::string writeIbnetdiscover(const Fabric& f);

}  // namespace loom::topo
