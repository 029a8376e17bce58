// Package pki is the session PKI of component mode: an in-memory certificate
// authority per launch, one leaf per role, and the mutual-TLS policy — who may
// call whom — that every component and the agent's splice apply the same way.
//
// # The pieces
//
// The launcher calls NewSession, then Session.Issue once per role. Each child
// process receives three PEM pieces on an inherited pipe (CA certificate, its
// leaf, its PKCS#8 key) and rebuilds its credential with ParseLeaf, naming the
// role it expects to be. ServerConfig and ClientConfig turn a Leaf into a
// *tls.Config; Leaf.PeerRole reads the caller's role off an accepted
// connection. The call table (Edges, MayCall) is data, so tests and
// documentation print the same table the code checks.
//
// # Choices
//
// Ed25519 and TLS 1.3 only. Both ends of every connection are ours, so there is
// no one to stay compatible with. Ed25519 has no parameters to choose and
// signs deterministically (no nonce to get wrong); TLS 1.3 has no
// renegotiation, no static key exchange and one handshake shape, and it
// encrypts certificates, so a client's identity is not sent in clear. Both
// configs pin MinVersion = MaxVersion = TLS 1.3 and disable resumption, so
// every connection is a full handshake checked afresh.
//
// The identity is one URI SAN, pinfold://session/<id>/<role>. It has to carry
// two fields, and a URI is the standard place for a structured name that is
// not a host (SPIFFE names workloads the same way). A DNS name would invite
// host-name matching and wildcard rules that mean nothing here; the subject
// common name is free text that X.509 verifiers have stopped reading. A
// session leaf carries exactly that one name and nothing else — no DNS, IP or
// email names, no second URI — so there is never a question of which name
// counts. (The subject repeats the URI for people using openssl; nothing
// reads it.)
//
// Verification is ours on both ends, in one function (peerCheck.check): the
// leaf alone (no chains), verified to the session CA only — never the system
// roots — at the current time; exactly one pinfold URI for this session; a
// known role; and a call the table allows. crypto/tls asks for a client
// certificate (RequestClientCert: a client without one is refused by the same
// check, and logged) and checks that each end holds its certificate's key; its own chain verification is off on the client
// (InsecureSkipVerify: there is no host name to verify) and not asked for on
// the server, so that both directions are checked by the same code and every
// refusal reaches the hook with the identity the peer claimed.
//
// The table is checked on both ends. The server's check is the authorisation:
// kms refuses fs however fs behaves. The client's check protects the client: a
// swapped socket path or a mis-wired splice must not lead net to send a secret
// request to whoever answers, or the agent to send a file write to bash. The
// client also checks that the server is the role it asked for, and it does so
// before it sends its own certificate. ServerConfig and ClientConfig also
// refuse, at start-up, configurations the table makes useless (a server for a
// role nobody calls, a client for a call the table forbids).
//
// # Where this improves on DESIGN.md
//
//   - ParseLeaf takes the role the child expects to be: a launcher that hands
//     the kms credential to the fs process fails at start-up, not at the first
//     call that kms's role happens to allow.
//   - The session CA has path length zero and its key cannot be exported: the
//     launcher is the only process that can mint an identity.
//   - DESIGN.md §5 has net terminate the agent's TLS "with the session CA" to
//     inject secrets. It must not be this CA: a process holding this CA's key
//     can mint a kms leaf (or any role). Secret injection needs its own
//     interception CA, handed to net, which these checks never trust.
//
// # Limitations
//
//   - No revocation (no CRL, no OCSP). A session lasts at most Lifetime (24
//     hours), and its CA dies with the launcher; a leaked leaf key stays valid
//     until then, and the remedy is to end the session. There is no renewal:
//     a session that outlives Lifetime fails its handshakes.
//   - Keys live in memory only as far as this package goes: it never writes
//     one to disk. Go cannot reliably erase memory, so copies of a key (its
//     KeyPEM bytes included) remain in the heap until reused. The agent's own
//     key is written to the agent's private session dir by the launcher
//     (DESIGN.md §5): the agent holds it anyway.
//   - On the server side the check, and so the hook, runs before the client
//     has proved it holds the key (TLS 1.3 sends that proof after the
//     certificate). RejectEvent.Claimed is a claim: a certificate seen once
//     can be replayed to make a refusal show someone else's name. Acceptance
//     does need the key.
//   - crypto/tls refuses a client that does not offer TLS 1.3, or that does
//     not speak TLS, before the check runs; those refusals appear in the
//     handshake error but not in the hook (there is no identity to report).
//     A client without a certificate does reach the check, and the hook.
//   - Validity is checked against the local clock, with Backdate (5 minutes)
//     of slack at the start. All session processes share one machine's clock.
//   - Server leaves have no DNS or IP names, so a stock TLS client that
//     verifies host names (curl, a browser) will not accept them: clients
//     must verify against the session CA and the URI, as ClientConfig does.
package pki
