// A main() for fuzz targets outside libFuzzer: runs LLVMFuzzerTestOneInput
// once on every regular file named on the command line or found (not
// recursively, in name order) in a directory named there. A missing path is
// skipped, so a target without a crashes/ folder still replays its corpus.
// A crash or sanitizer report ends the process non-zero, which fails the
// ctest; otherwise it prints how many inputs ran and exits 0.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

void collect(const fs::path& p, std::vector<fs::path>& out) {
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    std::vector<fs::path> here;
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.is_regular_file(ec)) here.push_back(e.path());
    std::sort(here.begin(), here.end());
    out.insert(out.end(), here.begin(), here.end());
  } else if (fs::is_regular_file(p, ec)) {
    out.push_back(p);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) collect(argv[i], files);
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "replay: cannot read %s\n", f.c_str());
      return 2;
    }
    std::fprintf(stderr, "replay: %s\n", f.c_str());
    // A copy in its own allocation, so ASan sees reads past the end.
    std::vector<uint8_t> data(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(data.data(), data.size());
  }
  std::printf("replay: %zu inputs ran without a crash\n", files.size());
  return 0;
}
