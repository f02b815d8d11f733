#include "core/runner/overlay_dir.h"

#include <fstream>
#include <sstream>

#include "core/nvtx/naming.h"
#include "core/support/json_writer.h"

namespace kl::runner {

namespace {
Result<void> writeText(const std::filesystem::path& p, std::string_view text) {
  std::error_code ec;
  std::filesystem::create_directories(p.parent_path(), ec);
  if (ec) return Error::io(p.parent_path().string() + ": cannot create directory: " + ec.message());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return Error::io(p.string() + ": cannot write");
  return {};
}
}  // namespace

Result<void> writeOverlayDir(const nvtx::Overlay& overlay, const std::filesystem::path& workspace,
                             const std::filesystem::path& dir) {
  auto root = workspace.lexically_normal();
  std::ostringstream manifest;
  json::Writer w(manifest, 1);
  w.beginObject().field("version", 1).field("workspace", root.string()).key("files").beginObject();
  for (const auto& [rel, f] : overlay.files) {
    if (auto ok = nvtx::checkRelativePath(rel); !ok) return Error::invalid("overlay: " + ok.error().message);
    std::string target = "files/" + rel;
    if (auto r = writeText(dir / target, f.text); !r) return r.error();
    w.field(rel, target);
  }
  w.endObject().endObject();
  std::string text = manifest.str() + "\n";
  return writeText(dir / "overlay.json", text);
}

}  // namespace kl::runner
