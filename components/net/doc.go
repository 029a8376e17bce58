// Package proxy is the net component (DESIGN.md §5): the agent's only
// client to the outside. It lives in components/net; the package is not
// called net so that it does not shadow the standard library's.
//
// The launcher starts it (in components mode, and beside a wrapper-mode
// agent in "proxy" mode) under a throwaway uid of its own (the person's,
// when the launcher is not root) with its listener made inside the
// agent's network namespace (127.0.0.1:7402; the agent's environment
// names it in HTTP_PROXY and the like), and it
// confines itself before serving: the resolver's files only, no exec, no
// bind, no Unix sockets. It serves CONNECT tunnels and absolute-form HTTP
// (Proxy), deciding every target in two steps (Decider, implemented by
// Egress from the policy's [network] table):
//
//   - the host as the client named it, normalised once (NormalizeHost:
//     IDNA, case, trailing dot, canonical IP literals only): the most specific
//     allow or deny rule wins, deny at equal specificity; with block_all
//     nothing else is allowed (IP literals included: rules take names);
//   - then every address its one lookup returned (Classify): anything but
//     a public unicast address — loopback, private, link-local, CGNAT,
//     metadata, multicast, documentation, reserved, and the IPv6 forms
//     that carry an IPv4 address — is refused unless an
//     unsafe_allow_private range holds it (metadata addresses only by a
//     range of that one address). The proxy dials only an address that
//     was checked, by address: no second lookup exists for a rebinding
//     to win. A connection whose source address is its destination
//     goes to the machine itself, by an address net did not know as its
//     own (one made after net started): it is closed before anything is
//     sent and decided as the machine's known addresses are (refused as
//     loopback unless unsafe_allow_private holds it).
//
// A CONNECT byte tunnel is decided by its host, but a front-end serving
// many names routes by what comes inside. So net reads the client's
// first message before any of it goes on (the upstream's bytes flow at
// once: a server that speaks first is heard), and closes both sides
// (logged as a refused CONNECT, rule tunnel.sni or tunnel.http) when it
// is:
//
//   - TLS (a first byte that is a record's content type, 20 to 24) whose
//     first record is not a handshake record carrying a ClientHello (up
//     to 64 KiB, across records, nothing else between them): a server
//     may skip an alert before the hello and route by the hello behind
//     it;
//   - a ClientHello that is malformed, repeats an extension, carries
//     encrypted_client_hello (unless network.allow_ech), or does not
//     name the CONNECT host alone in server_name, normalised as hosts are
//     (none at all for an IP literal): domain fronting;
//   - an SSLv2-style ClientHello (a first byte with the high bit set and
//     type 1 third), which has no server_name;
//   - the start of an HTTP request (a token and a blank, after any
//     blanks or control bytes: the HTTP/2 preface too; a token and a
//     bare LF with more behind it, which gunicorn before 22 read as one
//     request line), a
//     first line holding "HTTP/" in any case (the line up to LF, and up
//     to CR LF), or a PROXY protocol v2 header (a front-end that takes
//     one from the client routes by what follows it), unless the upstream spoke first (an HTTP server never
//     does; SMTP's clients answer "EHLO name"), or an ssh identification
//     line: plain HTTP goes in absolute form, where its Host is decided.
//     A blank is anything some server splits a request line on: space,
//     \t, \v, \f, \r, \n, 0x1c to 0x1f, 0x85 and 0xa0 (Python's
//     http.server takes them all). Control bytes (0x00 to 0x1f, 0x7f)
//     are skipped as blanks are: Netty's HTTP decoder skips them before
//     a request line. A first message of such bytes and blanks alone
//     goes on at once (a client-first protocol may wait on it: a SOCKS5
//     greeting) but decides nothing: what the client sends next is
//     decided with it, unless the upstream answered;
//   - unfinished when the client pauses (10 s, or the idle time if
//     shorter) or closes its side.
//
// Anything else (ssh, a database's protocol) passes unchanged, and the
// rest of the stream is copied as before.
//
// network.allow_ech exists for browsers: Chromium sends
// encrypted_client_hello in every TLS 1.3 hello, a GREASE decoy when it
// has no ECH config for the host, and a decoy cannot be told from the
// real thing. With it on, the outer server_name must still name the
// CONNECT host alone, but a front-end that accepts ECH routes by the
// inner name, which net cannot read: a client can reach any name behind
// an allowed host's front-end that accepts ECH.
//
// Denials answer 403 with X-Pinfold-Rule and X-Pinfold-Reason and are
// logged with the client, the target and the rule — never a path, a
// header value or a body. A redirect to a refused target, in plain HTTP
// or inside an intercepted connection, becomes 403, and so does one a
// browser would read otherwise than Go: a backslash, a control
// character, blanks around it, or an empty authority ("///host/x",
// which WHATWG parsers read as host "host"). So does one with more than
// one Location: clients differ on which they follow, and each would be
// one more lookup. `launcher check url` asks
// Egress the same questions without sending anything. net takes Upgrade
// and Connection off every request it forwards or intercepts, so an
// upstream's 101 Switching Protocols answers what net never asked: it
// becomes 502 (proxy.upstream, or secrets.upstream inside an intercepted
// connection, which then ends), not a switch the agent believes in while
// net goes on reading HTTP. A WebSocket goes through a CONNECT tunnel
// (as ws:// clients behind a proxy send it); to a [[secrets]] host,
// whose connections net intercepts, there is none.
//
// TRACE and TRACK (in any case, or named by an X-HTTP-Method-Override,
// X-HTTP-Method or X-Method-Override header, its name read as route
// headers' are below, or by a _method field in the query, which Symfony
// and Laravel read as a POST's method: its name read as PHP reads it,
// %5Fmethod and .method too) are refused with 403
// wherever net reads the method: plain HTTP (rule proxy.trace) and
// intercepted connections (secrets.trace), reason denied-method, before
// any lookup and before anything is sent. Their answer is the request
// itself: where net injects a secret that is the secret, and nowhere
// does an agent need it (cross-site tracing is its known abuse).
// Refusing it everywhere leaves no case to get wrong. In a byte tunnel
// net cannot see the method; no value is ever set there.
//
// Secret injection (Injector): for a host a [[secrets]] rule names (when
// two do, the rule whose pattern is the most specific, as for the domain
// policy; the policy refuses one pattern in two rules), net
// ends the agent's TLS with a certificate from the session's interception
// CA, sets the rule's header from the value kms releases for that host
// (over one end of a socketpair the launcher made, since net opens no
// Unix sockets), and sends the request on over TLS verified against the
// system's roots (or the SSL_CERT_FILE the person gave the launcher). A
// request on that connection whose Host names another host, or another
// port than the CONNECT's (443 when none is written: a front-end may pick
// a virtual host by host and port), is refused (secrets.host), and the
// Host sent on is the CONNECT host itself (lower case, no trailing dot,
// ":port" only when not 443), however the agent spelt it; hosts no rule
// names are byte tunnels and never see a value.
//
// Nor does the value go with a request a server may route elsewhere than
// its Host and path say. A front-end or framework that honours
// X-Forwarded-Host, X-Host, X-Forwarded-Server, X-HTTP-Host-Override,
// X-Original-Host or Forwarded (its host=) answers as another virtual
// host, or hands the request to another backend; a service mesh that
// honours X-Envoy-Original-Dst-Host (Envoy's original destination
// cluster with use_http_header: any address and port; spelt
// X-Envoy-Orignal-Dst-Host before Envoy 1.7.1), L5d-Dst-Override
// (Linkerd's ingress mode) or a per-request routing table (L5d-Dtab,
// L5d-Ctx-Dtab, Dtab-Local: Linkerd 1, Finagle) sends it to another
// destination; one that honours X-Original-URL or X-Rewrite-URL (IIS's
// URL Rewrite, Symfony and Zend before 2018's fixes) serves another path
// than the request's target,
// and so may one that takes the path a proxy saw before rewriting it
// (X-Original-URI, X-Forwarded-Uri, X-Envoy-Original-Path,
// X-Forwarded-Path, X-Original-Path) or the base path it stripped
// (X-Forwarded-Prefix): the host stays, but net does not send the value
// with a request whose meaning it cannot tell. (X-Forwarded-Proto,
// -Scheme, -Port and -Ssl name neither a host nor a path, and pass.)
// A request carrying any of them is refused on an intercepted connection
// with 403 (rule secrets.route-header, reason denied-header), before kms
// is asked, whatever the header says: naming the connection's own host
// too, and Forwarded whole rather than parsed. Proxies add these headers;
// a client has no use for them, and reading their values would be one
// more parser to get wrong where a secret rides on it. Names are compared
// as some server may read them: in any case, blanks around them trimmed,
// and any byte but a letter or a digit taken for '-'. Go does not
// canonicalise X_Forwarded_Host, but nginx's $http_ variables (with
// underscores_in_headers) and CGI and WSGI, which map '-' and '_' both
// to '_', read it as X-Forwarded-Host. The rule's own header is read the
// same way: what the agent sent under its name, or under one a server may
// read as it (X_Api_Key or X.Api.Key for X-Api-Key), is dropped before
// net sets it, so the upstream reads the value once and nothing beside
// it. Dropped, not refused: the agent's own spelling (a placeholder) is
// replaced, and a look-alike is that same header to the server that
// reads it. A chunked request's trailers,
// which come after the head and the value have gone, are dropped
// (declared or not): a server that merges them into the header would
// route by what the check never saw. The target goes up made again from
// its path and query, and bytes outside ASCII in the query
// percent-encoded (servers split or keep them differently); a target
// holding '#' (a fragment, which no client sends and servers read
// differently) is refused (secrets.request). Plain HTTP
// through the proxy carries no value and is left alone (Limitations).
//
// An upstream that answers before it has read a request's body (413, a
// 401 to a wrong token) and closes has its answer passed on as any
// other, and the intercepted connection ends after it.
//
// Nothing on an intercepted connection may send the value back to the
// agent. TRACE, TRACK and CONNECT (secrets.connect) are refused there
// before kms is asked. The request goes up with Accept-Encoding:
// identity, whatever the agent asked, so that an echo is not hidden by
// compression; an answer compressed anyway, in gzip or deflate, is
// decoded by net and passed on as identity (scanned as it streams), and
// one in any other coding is refused with 502 (secrets.upstream). Every
// answer (interim ones too) is looked at for the
// value, verbatim as it was sent (Go's writer trims blanks from a header
// value's ends and writes CR and LF as spaces: a token stored with a
// trailing space goes, and comes back, without it), before it goes: its
// reason phrase and headers, and a
// body with a Content-Length of at most 1 MiB (reflectLimit), read whole
// first. If the value is there the agent gets 502 (rule
// secrets.reflected, reason secret-reflected) instead, and the refusal
// is logged. A longer body, or one of unknown length (chunked, a stream),
// is passed on as it comes through a scanner that holds back the last
// len(value)-1 bytes. If the value appears, the answer is cut off before
// any byte of it goes (trailers are looked at before they go too); the
// agent has had the head by then, so it sees the answer break, not a
// 502. A body that ends with the connection then looks complete. Refusals
// on intercepted connections have the same shape as the proxy's
// (X-Pinfold-Rule, X-Pinfold-Reason, a short text), and X-Pinfold-*
// headers from the upstream are dropped there too, as on plain HTTP, in
// any spelling a client may read as them (X_Pinfold_Rule: names read as
// route headers' are).
//
// # Deviations from DESIGN.md
//
//   - The interception CA is not the session's mutual-TLS CA: one the
//     agent must trust for web hosts is kept apart from the one that says
//     who is a component, and it is name-constrained (critical) to the
//     rules' hosts (an exact host's subdomains and every IP address
//     excluded), so a certificate it signs for any other name does not
//     verify, even if its key left net.
//   - kms releases a value per request to net, not once: net holds a
//     value only for the request it serves.
//
// # Limitations
//
//   - Names are looked up as clients look them up (relative, so
//     /etc/hosts applies): a resolver search list may try NAME.DOMAIN
//     after NAME. Every address is still classified, and an intercepted
//     host's upstream must still prove NAME.
//   - No port policy: "proxy" mode allows any port of an allowed host.
//   - The tunnel check sees the first message only. Inside TLS the Host
//     header is encrypted: a front-end that routes by Host rather than
//     SNI can still be reached through an allowed name (only
//     interception, as [[secrets]] hosts get, sees inside). So can one
//     that routes plain HTTP by X-Forwarded-Host and the like: net passes
//     those on there (no value rides on plain HTTP). Nor does it
//     see a second ClientHello (after a HelloRetryRequest) or TLS
//     started later in the stream (STARTTLS). A client-first protocol
//     whose first line is a word and a blank (git://, Redis's inline
//     commands with arguments, memcached) is refused as HTTP, and so is
//     a bare word the client sends and then waits on (a word alone on
//     its line passes). So is a binary first message whose first bytes
//     are control bytes and whose next are a token and a blank, and, if
//     the server did not answer them, one of control bytes alone on
//     which the client waits more than 10 s. So is a binary first
//     message, unless the server spoke, whose first byte is 20 to 24 and
//     that is not a ClientHello, or whose first byte has the high bit
//     set and whose third is 1 (SSLv2's shape), or whose bytes up to the
//     first LF, or up to the first CR LF, hold "HTTP/". A first message of one or two bytes with the high bit set
//     waits for a third.
//   - "HTTP/" on the first line is looked for in the bytes read when the
//     line's start is decided: a first message that starts (after
//     blanks and control bytes) with neither a token nor a blank, or
//     whose first word is followed by such a byte, passes at once, so a
//     client can send "\x80GET /x " or "GET\x00" and the rest in a later
//     segment; so can "GET\n" then "/x HTTP/1.1" in a second segment
//     (gunicorn before 22). Only a server that takes
//     any word for a method (Python's http.server, under Werkzeug and
//     Django's runserver) would read that as a request.
//   - With network.allow_ech a front-end that accepts ECH is reachable by
//     any name it serves, through an allowed host's outer name.
//   - The scan for a reflected value is defence in depth, not a
//     boundary: it finds the value only verbatim and whole, in one
//     answer. An upstream that echoes it transformed (JSON-escaped,
//     base64, URL-encoded, hashed, in a compressed file or archive the
//     body carries), in part, or in pieces across answers (a Range
//     request to an echoing endpoint) is not caught. Only name in [[secrets]]
//     hosts that do not send request headers back. A value short enough
//     to turn up by chance makes answers that happen to hold it fail
//     with 502. Each intercepted exchange in flight may hold one body of
//     up to 1 MiB.
//   - A _method field in a form body (urlencoded or multipart), which
//     Symfony and Laravel also read as a POST's method, TRACE among the
//     methods they take, is not looked for: net does not read a request's
//     body before it goes. A bounded read would not hold: the framework
//     reads a field past the bound (behind a padding field or a file
//     part) all the same, and refusing forms longer than the bound would
//     refuse uploads. The override is the application's: the web server
//     in front (Apache's TraceEnable, IIS) sees a POST and echoes
//     nothing, so only an application that answers TRACE itself with the
//     request sends the value back, as any endpoint echoing headers does,
//     and the answer scan is what stands there. (Rails' Rack
//     MethodOverride takes no TRACE or TRACK.)
//   - Route headers are known by name: a front-end told to route by a
//     header of its operator's naming (Envoy's http_header_name, nginx's
//     proxy_pass to $http_x_something) is not known, and the value goes
//     with a request carrying it. Only name in [[secrets]] hosts whose
//     front-end does not route by what the client sends.
//   - The machine's own addresses (refused as loopback even when public)
//     are read when net starts (net does not start when it cannot read
//     them). One made since (an IPv6 temporary address, new every day or
//     so, which an agent learns as the source of its own requests), or
//     an IPv4 range routed to the machine by a local route (AnyIP), is
//     found only once dialled (its source is its destination): the
//     service there accepts a connection that net closes with nothing
//     sent. An IPv6 local route is not found at all: Linux gives a
//     connection to it another of the machine's addresses as source.
//   - NAT64 is known by its well-known prefixes only (64:ff9b::/96,
//     64:ff9b:1::/48). Where the machine reaches IPv4 through a translator
//     with a network-specific prefix (RFC 6052; DNS64 answers for
//     ipv4only.arpa show it), an address under that prefix looks public,
//     and a name whose AAAA record puts a private or metadata IPv4 address
//     behind it reaches that address through the translator (RFC 6052
//     forbids translating non-global addresses for the well-known prefix
//     only). Use such a network only with block_all and allow rules for
//     names whose records the agent cannot choose.
//   - Beside a wrapper-mode agent net has no session: no certificate, no
//     kms, no injection (wrapper mode has no [[secrets]]). Its listener is
//     made by stage 2 inside the agent's namespace and handed out, since
//     an unprivileged launcher cannot enter that namespace. As root it
//     runs in a cgroup of its own, as components do; unprivileged, under
//     the person's uid, it has the person's limits only.
package proxy
