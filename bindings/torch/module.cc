// Python module loom_torch._C: the ProcessGroupLoom class (a torch ProcessGroup for pybind11) and
// the creator that torch.distributed calls with (store, rank, size, timeout). loom_torch's
// __init__.py registers the creator as the backend "loom".
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/python.h>

#include <chrono>

#include "process_group.h"

namespace py = pybind11;
using loom::torch_backend::ProcessGroupLoom;

namespace {

c10::intrusive_ptr<ProcessGroupLoom> createProcessGroupLoom(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
    const std::chrono::duration<float>& timeout) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  py::gil_scoped_release noGil;  // bootstrap waits on the store and the other ranks
  return c10::make_intrusive<ProcessGroupLoom>(store, rank, size, ms);
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "loom collective-communication backend for torch.distributed";
  py::module::import("torch.distributed");  // registers c10d.ProcessGroup, Store for pybind11
  py::class_<ProcessGroupLoom, loom::torch_backend::TorchBase,
             c10::intrusive_ptr<ProcessGroupLoom>>(m, "ProcessGroupLoom")
      .def(py::init(&createProcessGroupLoom), py::arg("store"), py::arg("rank"), py::arg("size"),
           py::arg("timeout"))
      .def("shutdown", &ProcessGroupLoom::shutdown, py::call_guard<py::gil_scoped_release>(),
           "Waits briefly for queued work, aborts what remains, and frees the communicator.");
  m.def("create_process_group", &createProcessGroupLoom, py::arg("store"), py::arg("rank"),
        py::arg("size"), py::arg("timeout"),
        "Creator for torch.distributed.Backend.register_backend('loom', ...).");
  m.attr("torch_2_api") = static_cast<bool>(LOOM_TORCH_2);
  m.def("loom_version", [] {
    int v = 0;
    loomGetVersion(&v);
    return v;
  });
}
