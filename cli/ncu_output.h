// Shared output of `kernlens ncu import` and `kernlens kernels`: the kernel objects (JSON), the
// text table and CSV, and the catalogue path (--db, else <--root or .>/.kernlens/kernlens.db).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "cli/cli.h"
#include "core/ncu/catalog.h"

namespace kl::cli {

std::filesystem::path catalogPath(const Args& args);
nlohmann::json kernelJson(const ncu::KernelRow& k);
void printKernelTable(std::ostream& out, const std::vector<ncu::KernelRow>& rows);
void printKernelCsv(std::ostream& out, const std::vector<ncu::KernelRow>& rows);

}  // namespace kl::cli
