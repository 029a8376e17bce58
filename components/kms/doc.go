// Package kms is the key management component: the person's sealed vault
// of secrets, and the process that holds them unsealed for one session
// and releases a value only to the net component for a matching injection
// rule (DESIGN.md §5).
//
// Store is the session side: the secrets that the policy's [[secrets]]
// rules name (and no others) copied into memory that is locked (never
// swapped), excluded from core dumps and wiped in a forked child; Release
// gives a value to the net component only, for a rule naming it whose
// hosts match and that is the rule the host gets (its most specific
// pattern, policy.SecretRuleFor, as net chooses: a broader rule's secret
// is refused for a host a narrower rule gives another), and answers
// everything else with a Decision and its reason.
//
// The vault: a file sealed with XChaCha20-Poly1305,
// its key from argon2id over a passphrase (RFC 9106's t=3, m=64 MiB, p=4)
// or from a key file of at least 32 random bytes. The whole header
// (format version, key derivation and its parameters, salt, nonce) is the
// AEAD's additional data, so changing any of it fails like changing the
// ciphertext; a header that asks for more argon2id work than this launcher
// allows is refused before any is done. Each seal draws a fresh salt and
// nonce. The file is written atomically (temporary file, fsync, rename,
// directory fsync) and read only if it is a regular file, not a symlink,
// that only its owner may read.
//
// Improving on DESIGN.md: a key file is not stretched (it is already
// random) but hashed with the salt under a label; a key-file vault and a
// passphrase vault cannot be confused, since the header says which.
//
// # Limitations
//
//   - A wrong key and an altered file are indistinguishable (both fail the
//     tag), and the error says so.
//   - The values, the passphrase or key file and the derived key are in
//     the launcher's memory while it unseals the vault. The launcher is
//     then not dumpable and has core size 0; it clears what the code
//     holds (Key.Wipe, the derived key, the plaintext, the values once
//     kms has them) and encodes kms's bootstrap itself (Bootstrap.Encode)
//     rather than through encoding/json's pooled buffers. Copies inside
//     argon2id's working memory and the cipher object cannot be cleared
//     from here, and freed memory keeps its bytes until reused; none of
//     it is locked against swap. Only Store's copy is in locked memory.
//     Release returns a copy on the Go heap, for net; that copy, its
//     JSON encoding and the TLS buffers that carry it stay in kms's heap,
//     unlocked and uncleared, until the memory is reused (kms is not
//     dumpable; swap can hold them).
//   - The kms process (Main, started as `launcher __pinfold_component kms`)
//     reads its credential, the rules and the unsealed values from an
//     inherited pipe, takes its listening Unix socket from the launcher,
//     then confines itself (launcher.ConfineComponent: no files, no new
//     sockets, no programs) before serving.
//   - Names and dates are as secret as values: they are sealed too, so
//     `launcher secrets list` needs the key.
//   - A key file is hashed, not stretched: it must be random (32 bytes
//     from /dev/urandom); a key file a person typed is as weak as its text.
//   - A components-mode launch runs as root, so the vault it opens is
//     root's (at root's config directory unless --vault names another):
//     a person's own vault, made without root, is refused as another
//     uid's, and the launch says to add the secrets as root.
//   - Rollback: whoever can replace the file (the owner, root) can put back
//     an older vault, with secrets since removed; the directory must be the
//     owner's and not writable by others, and the vault read only if it is
//     the owner's and private.
//   - A file cut short inside its sealed part is reported as a wrong key or
//     an altered vault (the tag fails); the two cannot be told apart. The
//     magic, the format version and the key derivation are read before
//     any key is asked for.

package kms
