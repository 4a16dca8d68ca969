#include <chrono>
#include <iostream>
#include <random>
#include <string>
#include "gtest/gtest.h"
#include "runtime/data/bpe_tokenizer.h"
#include "absl/strings/str_cat.h"
namespace zosched {
TEST(Scratch, Speed) {
  const std::string d = absl::StrCat(getenv("TEST_SRCDIR"), "/", getenv("TEST_WORKSPACE"), "/runtime/data/testdata/gpt2/");
  auto tok = BpeTokenizer::FromFiles(d + "vocab.json", d + "merges.txt");
  ASSERT_TRUE(tok.ok());
  std::mt19937 rng(1);
  for (int n : {1 << 14, 1 << 16, 1 << 18}) {
    std::string latin, cjk;
    for (int i = 0; i < n; ++i) latin.push_back('a' + rng() % 26);
    for (int i = 0; i < n / 3; ++i) { uint32_t cp = 0x4e00 + rng() % 0x5000; cjk += char(0xe0 | (cp >> 12)); cjk += char(0x80 | ((cp >> 6) & 0x3f)); cjk += char(0x80 | (cp & 0x3f)); }
    for (const std::string* s : {&latin, &cjk}) {
      auto t0 = std::chrono::steady_clock::now();
      auto ids = tok->Encode(*s);
      std::cout << n << " bytes: " << ids.size() << " tokens " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
    }
  }
}
}
