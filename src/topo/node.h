// Node topology from hwloc: NUMA nodes, cores, the PCI tree, GPUs, NICs, PCI and NVSwitch
// counts, and a path class + bandwidth for every GPU-NIC and GPU-GPU pair.
//
// Path classes (NCCL's levels): NVL when the NVLinkBandwidth distance matrix links two GPUs
// directly, NVB when both reach NVSwitches; otherwise from the PCI tree: PIX when the devices meet
// at one PCI switch, PXB when they meet at a PCI bridge across several switches, PHB when they
// meet at a host bridge or share a CPU package, SYS across packages.
// Bandwidths (GB/s): NVL = the matrix value; NVB = min over the two GPUs of their summed switch
// bandwidth; PCIe classes = the slower device's PCIe link (hwloc linkspeed, else 12), capped at
// kSmpGBps across packages.
#pragma once

#include <string>

#include "core/status.h"
#include "topo/topology.h"

namespace loom::topo {

constexpr double kDefaultPcieGBps = 12.0;  // PCIe Gen3 x16 effective, when hwloc has no speed
constexpr double kSmpGBps = 10.0;          // CPU-to-CPU interconnect share for a SYS path

// `xmlPath` empty: this machine (or LOOM_HWLOC_XML when set); else that hwloc XML file.
// Errors name the file. Without hwloc support compiled in, returns an error.
Status probeHost(const std::string& xmlPath, Host* out);

// The same from XML text in memory; `source` names it in errors.
Status probeHostXmlBuffer(const std::string& xml, const std::string& source, Host* out);

// Sets Gpu::cudaDevice for GPUs the CUDA driver (libcuda.so.1, opened at run time) reports, by
// PCI bus id; returns how many matched (0 without a driver). probeHost() calls it for the live
// machine only.
int matchCudaDevices(Host* h);
// Compares PCI bus ids numerically ("0000:3B:00.0" == "00000000:3b:00.0").
bool busIdsEqual(const std::string& a, const std::string& b);

// Loads `xml` once in a forked child and reports an error when hwloc crashes on it (libhwloc
// 2.9 does on some malformed files). probeHost* call it before loading XML in-process.
Status hwlocXmlPreflight(const std::string& xml, const std::string& source);

// True when loom was built with hwloc.
bool haveHwloc();

}  // namespace loom::topo
