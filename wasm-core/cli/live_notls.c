/*
 * live_notls.c - the GnuTLS functions libmicrohttpd.a refers to, for the
 * static release binary only (SLABLAB_STATIC_NO_TLS; scripts/build-release.mjs).
 *
 * Debian's libmicrohttpd.a is built with HTTPS, so it refers to GnuTLS,
 * whose own static library needs p11-kit and libunistring, of which Debian
 * ships no static library.  `slablab serve` never asks for TLS (no
 * MHD_USE_TLS: it listens on loopback, or behind the explicit --bind flag),
 * so none of these is ever called but the library's start and end
 * (gnutls_global_init from MHD_init, gnutls_global_deinit from MHD_fini),
 * which succeed doing nothing.  Every other one stops the program saying
 * why, rather than pretend TLS works.  The definitions take no parameters:
 * they are only ever reached through libmicrohttpd's HTTPS paths, never
 * called from this program's code, and they never return.
 */
#if SLABLAB_STATIC_NO_TLS
#include <stdio.h>
#include <stdlib.h>

int gnutls_global_init(void);
void gnutls_global_deinit(void);

int gnutls_global_init(void) { return 0; }

void gnutls_global_deinit(void) {}

/* A variable in GnuTLS (its malloc), read only on MHD's PSK path. */
void *(*gnutls_malloc)(size_t) = malloc;

static _Noreturn void no_tls(const char *fn)
{
    fprintf(stderr, "slablab: %s: this build has no TLS (libmicrohttpd's HTTPS is not linked in)\n", fn);
    abort();
}

#define NO_TLS(fn)                                                                                                     \
    void fn(void);                                                                                                     \
    void fn(void) { no_tls(#fn); }

NO_TLS(gnutls_alpn_set_protocols)
NO_TLS(gnutls_bye)
NO_TLS(gnutls_certificate_allocate_credentials)
NO_TLS(gnutls_certificate_free_credentials)
NO_TLS(gnutls_certificate_server_set_request)
NO_TLS(gnutls_certificate_set_dh_params)
NO_TLS(gnutls_certificate_set_retrieve_function2)
NO_TLS(gnutls_certificate_set_retrieve_function3)
NO_TLS(gnutls_certificate_set_x509_key_mem)
NO_TLS(gnutls_certificate_set_x509_key_mem2)
NO_TLS(gnutls_certificate_set_x509_trust_mem)
NO_TLS(gnutls_cipher_get)
NO_TLS(gnutls_credentials_set)
NO_TLS(gnutls_deinit)
NO_TLS(gnutls_dh_params_deinit)
NO_TLS(gnutls_dh_params_import_pkcs3)
NO_TLS(gnutls_dh_params_init)
NO_TLS(gnutls_handshake)
NO_TLS(gnutls_init)
NO_TLS(gnutls_priority_deinit)
NO_TLS(gnutls_priority_init)
NO_TLS(gnutls_priority_set)
NO_TLS(gnutls_protocol_get_version)
NO_TLS(gnutls_psk_allocate_server_credentials)
NO_TLS(gnutls_psk_free_server_credentials)
NO_TLS(gnutls_psk_set_server_credentials_function)
NO_TLS(gnutls_record_check_pending)
NO_TLS(gnutls_record_get_direction)
NO_TLS(gnutls_record_recv)
NO_TLS(gnutls_record_send)
NO_TLS(gnutls_session_get_ptr)
NO_TLS(gnutls_session_set_ptr)
NO_TLS(gnutls_strerror)
NO_TLS(gnutls_transport_set_int2)
#else
/* Not the static release build: the real GnuTLS comes with libmicrohttpd's shared library. */
typedef int sl_live_notls_unused;
#endif
