#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
// OpenSSL 3 libcrypto as used by MatterCrypto: AES-CCM/CTR (EVP), PBKDF2,
// EC point arithmetic for SPAKE2+ (EC_POINT/BN), and X.509/CMS parsing for
// verification in tests.
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/obj_mac.h>
#include <openssl/err.h>
#include <openssl/core_names.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/pem.h>
#include <openssl/cms.h>
#include <openssl/bio.h>

// Function-like and aliased macros do not import into Swift; these constants do.
static const int COPENSSL_EVP_CTRL_AEAD_SET_IVLEN = EVP_CTRL_AEAD_SET_IVLEN;
static const int COPENSSL_EVP_CTRL_AEAD_SET_TAG = EVP_CTRL_AEAD_SET_TAG;
static const int COPENSSL_EVP_CTRL_AEAD_GET_TAG = EVP_CTRL_AEAD_GET_TAG;
static const int COPENSSL_NID_P256 = NID_X9_62_prime256v1;
#endif
