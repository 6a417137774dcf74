#include <gtest/gtest.h>

#include <set>

#include "admin/auth/password_hasher.h"
#include "admin/auth/secrets.h"

namespace cronwheel::admin {
namespace {

PasswordHasher::Options fast() { return {PasswordHasher::Strength::kMinimum, 2}; }

TEST(PasswordHasher, VerifiesTheHashedPassword) {
  PasswordHasher hasher(fast());
  auto hash = hasher.hash("correct horse battery staple");
  EXPECT_TRUE(hasher.verify(hash, "correct horse battery staple"));
}

TEST(PasswordHasher, RejectsAWrongPassword) {
  PasswordHasher hasher(fast());
  auto hash = hasher.hash("correct horse battery staple");
  EXPECT_FALSE(hasher.verify(hash, "correct horse battery stapler"));
  EXPECT_FALSE(hasher.verify(hash, ""));
}

TEST(PasswordHasher, ProducesSaltedArgon2idStrings) {
  PasswordHasher hasher(fast());
  auto first = hasher.hash("same password");
  auto second = hasher.hash("same password");
  EXPECT_EQ(first.rfind("$argon2id$", 0), 0u) << first;
  EXPECT_NE(first, second);  // a random salt each time
  EXPECT_TRUE(hasher.verify(second, "same password"));
}

TEST(PasswordHasher, VerifiesHashesMadeWithOtherLimits) {
  // The limits are part of the hash string: a hash made at the production cost verifies with
  // a hasher configured otherwise, and the reverse.
  PasswordHasher production;
  PasswordHasher test(fast());
  EXPECT_TRUE(test.verify(production.hash("password one"), "password one"));
  EXPECT_TRUE(production.verify(test.hash("password two"), "password two"));
}

TEST(PasswordHasher, RefusesOverlongPasswords) {
  PasswordHasher hasher(fast());
  const std::string longest(PasswordHasher::kMaxPasswordBytes, 'x');
  auto hash = hasher.hash(longest);
  EXPECT_TRUE(hasher.verify(hash, longest));
  EXPECT_THROW(hasher.hash(longest + "x"), std::length_error);
  EXPECT_FALSE(hasher.verify(hash, longest + "x"));
}

TEST(PasswordHasher, TreatsMalformedHashesAsAMismatch) {
  PasswordHasher hasher(fast());
  EXPECT_FALSE(hasher.verify("", "password"));
  EXPECT_FALSE(hasher.verify("password", "password"));
  EXPECT_FALSE(hasher.verify("$argon2id$v=19$m=8,t=1,p=1$garbage", "password"));
  EXPECT_FALSE(hasher.verify(std::string(1000, '$'), "password"));
  EXPECT_FALSE(hasher.verify(std::string("$argon2id\0tail", 14), "password"));
}

TEST(PasswordHasher, DecoyHashMatchesNoPassword) {
  PasswordHasher hasher(fast());
  EXPECT_EQ(hasher.decoy_hash().rfind("$argon2id$", 0), 0u);
  EXPECT_FALSE(hasher.verify(hasher.decoy_hash(), ""));
  EXPECT_FALSE(hasher.verify(hasher.decoy_hash(), "password"));
}

TEST(Secrets, RandomSecretsAreUrlSafeAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto secret = random_secret(32);
    EXPECT_EQ(secret.size(), 43u);  // 32 bytes in unpadded base64
    EXPECT_EQ(secret.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
              std::string::npos)
        << secret;
    seen.insert(secret);
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(random_secret(18).size(), 24u);
}

TEST(Secrets, SecretHashIsRawSha256) {
  auto digest = secret_hash("abc");
  ASSERT_EQ(digest.size(), 32u);
  EXPECT_EQ(to_hex(digest), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(secret_hash("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Secrets, HexRoundTripsAndRejectsNonHex) {
  const std::string bytes("\x00\x01\xfe\xff", 4);
  EXPECT_EQ(to_hex(bytes), "0001feff");
  EXPECT_EQ(from_hex("0001feff"), bytes);
  EXPECT_EQ(from_hex("0001FEFF"), bytes);
  EXPECT_EQ(from_hex("abc"), "");
  EXPECT_EQ(from_hex("zz"), "");
  EXPECT_EQ(from_hex("00 1"), "");
}

TEST(Secrets, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(constant_time_equals("", ""));
  EXPECT_TRUE(constant_time_equals("csrf-token", "csrf-token"));
  EXPECT_FALSE(constant_time_equals("csrf-token", "csrf-tokem"));
  EXPECT_FALSE(constant_time_equals("csrf-token", "csrf-toke"));
  EXPECT_FALSE(constant_time_equals("", "x"));
}

}  // namespace
}  // namespace cronwheel::admin
