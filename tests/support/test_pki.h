#pragma once
// A throwaway PKI for the TLS tests (Kafka group client, REST over HTTPS,
// the TLS proxy), made at test time by the `openssl` command in a fresh
// temporary directory that goes with the object: a CA, an unrelated CA,
// a server certificate for localhost/127.0.0.1, one for another host name,
// a client certificate, encrypted keys and a file that is not PEM. EC P-256
// keys, valid two days. Test code only.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace kc::test {

/// File paths of the PKI; every path is absolute.
struct TestPki {
  std::string dir;
  std::string ca_pem;        ///< the trusted CA (PEM) that signed the server and client certificates
  std::string other_ca_pem;  ///< a CA that signed nothing used here (wrong trust)
  /// Server certificate and key: CN=localhost, SAN DNS:localhost and
  /// IP:127.0.0.1; usable as a client certificate too (REST workers
  /// present it to each other).
  std::string server_cert, server_key;
  std::string server_keystore;       ///< server key + certificate in one PEM file
  std::string server_key_encrypted;  ///< server key, AES-256, password server_key_password
  std::string server_key_password = "changeit";
  std::string wrong_cert, wrong_key;    ///< SAN DNS:wrong.example only (host name mismatch)
  std::string client_cert, client_key;  ///< CN=kconnectd-client, client authentication
  std::string client_keystore;          ///< client key + certificate in one PEM file
  std::string client_key_encrypted;     ///< client key as encrypted PKCS#8, password client_key_password
  std::string client_key_password = "s3cret";
  std::string not_pem;  ///< a file that is not PEM (a JKS magic number)

  /// Generates the PKI. Throws std::runtime_error naming the openssl
  /// command that failed.
  TestPki() {
    char tmpl[] = "/tmp/kc-pki-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("TestPki: mkdtemp failed");
    dir = tmpl;
    auto p = [&](const char* name) { return dir + "/" + name; };
    ca_pem = make_ca("ca", "kc-test-ca");
    other_ca_pem = make_ca("other-ca", "kc-other-ca");
    std::tie(server_cert, server_key) =
        make_leaf("server", "localhost",
                  "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n");
    std::tie(wrong_cert, wrong_key) =
        make_leaf("wrong", "wrong.example", "subjectAltName=DNS:wrong.example\nextendedKeyUsage=serverAuth\n");
    std::tie(client_cert, client_key) = make_leaf("client", "kconnectd-client", "extendedKeyUsage=clientAuth\n");
    server_keystore = p("server-keystore.pem");
    client_keystore = p("client-keystore.pem");
    server_key_encrypted = p("server-enc.key");
    client_key_encrypted = p("client-enc.key");
    not_pem = p("not-pem.jks");
    run("openssl pkey -in " + server_key + " -aes256 -passout pass:" + server_key_password + " -out " +
        server_key_encrypted);
    run("openssl pkcs8 -topk8 -v2 aes-256-cbc -in " + client_key + " -out " + client_key_encrypted +
        " -passout pass:" + client_key_password);
    std::ofstream(server_keystore) << read(server_key) << read(server_cert);
    std::ofstream(client_keystore) << read(client_key) << read(client_cert);
    std::ofstream(not_pem) << "\xfe\xed\xfe\xed not a PEM keystore\n";
  }
  ~TestPki() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  /// One PKI shared by a whole test process, made on first use.
  static const TestPki& get() {
    static const TestPki pki;
    return pki;
  }

  /// The whole text of `path` ("" when unreadable).
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

 private:
  static void run(const std::string& cmd) {
    if (std::system(("(" + cmd + ") >/dev/null 2>&1").c_str()) != 0)
      throw std::runtime_error("TestPki: command failed: " + cmd);
  }

  // A CA: self-signed, CA:TRUE. Returns the path of its certificate
  // (<name>.pem; the key is <name>.key).
  std::string make_ca(const std::string& name, const std::string& cn) const {
    run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -keyout " + dir + "/" +
        name + ".key -out " + dir + "/" + name + ".pem -subj '/CN=" + cn +
        "' -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign");
    return dir + "/" + name + ".pem";
  }

  // A leaf certificate signed by the CA, with the extensions in `ext`.
  // Returns the paths of the certificate and of its key.
  std::pair<std::string, std::string> make_leaf(const std::string& name, const std::string& cn,
                                                const std::string& ext) const {
    const std::string d = dir + "/";
    std::ofstream(d + name + ".ext") << ext;
    run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + d + name + ".key -out " + d +
        name + ".csr -subj '/CN=" + cn + "'");
    run("openssl x509 -req -days 2 -in " + d + name + ".csr -CA " + d + "ca.pem -CAkey " + d +
        "ca.key -CAcreateserial -out " + d + name + ".pem -extfile " + d + name + ".ext");
    return {d + name + ".pem", d + name + ".key"};
  }
};

}  // namespace kc::test
