#include "core/store/git_info.h"

#include <git2.h>

#include <memory>

namespace kl::store {
namespace {

/// libgit2 is initialised once per process and kept (git_libgit2_shutdown at exit is optional).
void ensureInit() {
  static const int once = git_libgit2_init();
  (void)once;
}

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const {
    if (p) Free(p);
  }
};
using Repo = std::unique_ptr<git_repository, Deleter<git_repository, git_repository_free>>;
using Ref = std::unique_ptr<git_reference, Deleter<git_reference, git_reference_free>>;
using StatusList = std::unique_ptr<git_status_list, Deleter<git_status_list, git_status_list_free>>;

std::string lastGitError() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown libgit2 error";
}

}  // namespace

GitInfo gitInfo(const std::filesystem::path& workspace) {
  ensureInit();
  GitInfo info;
  git_buf found = GIT_BUF_INIT;
  if (git_repository_discover(&found, workspace.c_str(), 0, nullptr) != 0) {
    git_buf_dispose(&found);
    return info;  // not a repository: fine
  }
  std::string gitDir(found.ptr, found.size);
  git_buf_dispose(&found);
  git_repository* raw = nullptr;
  if (git_repository_open(&raw, gitDir.c_str()) != 0) {
    info.error = "git: " + lastGitError();
    return info;
  }
  Repo repo(raw);
  info.isRepo = true;
  git_reference* headRaw = nullptr;
  int rc = git_repository_head(&headRaw, repo.get());
  Ref head(headRaw);
  if (rc == 0) {
    if (const git_oid* oid = git_reference_target(head.get())) {
      char hex[GIT_OID_HEXSZ + 1] = {0};
      git_oid_tostr(hex, sizeof hex, oid);
      info.commit = hex;
    }
    if (git_reference_is_branch(head.get())) {
      const char* name = nullptr;
      if (git_branch_name(&name, head.get()) == 0 && name) info.branch = name;
    }
  } else if (rc != GIT_EUNBORNBRANCH && rc != GIT_ENOTFOUND) {
    info.error = "git: " + lastGitError();
  }
  if (git_repository_is_bare(repo.get())) return info;
  git_status_options opts = GIT_STATUS_OPTIONS_INIT;
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  opts.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;  // untracked files are not "dirty"
  git_status_list* listRaw = nullptr;
  if (git_status_list_new(&listRaw, repo.get(), &opts) != 0) {
    info.error = "git status: " + lastGitError();
    return info;
  }
  StatusList list(listRaw);
  info.dirty = git_status_list_entrycount(list.get()) > 0;
  return info;
}

std::string blobId(std::string_view bytes) {
  ensureInit();
  git_oid oid;
  if (git_odb_hash(&oid, bytes.data(), bytes.size(), GIT_OBJECT_BLOB) != 0) return "";
  char hex[GIT_OID_HEXSZ + 1] = {0};
  git_oid_tostr(hex, sizeof hex, &oid);
  return hex;
}

}  // namespace kl::store
