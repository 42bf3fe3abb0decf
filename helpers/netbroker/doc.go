// Package netbroker is lnk-netbroker's filtering proxy: a sandbox's only
// way to the network. One proxy serves one sandbox: on its unix socket,
// and on the sandbox's own listener on 127.0.0.1:<port>, which the
// sandbox's first stage hands it once on a channel only the two hold
// (Options.Relay, relay.go, internal/connpass). The proxy accepts the
// sandbox's connections there itself: no process inside relays them.
//
// It serves CONNECT host:port tunnels (for TLS) and absolute-form
// http:// requests, one request per connection; origin-form requests
// under /_link/ go to Link's own routes (Config.Routes: sealed secrets;
// a tool call's connection is passed whole to the tool bridge on
// Config.ToolBridge, internal/connpass) and are never forwarded, as do absolute-form ones for a
// /_link/ path at a loopback host (a client that sends the sandbox's own
// 127.0.0.1 through HTTP_PROXY, as curl does).
//
// # SOCKS5
//
// For programs that ignore HTTP_PROXY, the same socket speaks SOCKS5
// (RFC 1928): a connection whose first byte is 0x05 (no HTTP request
// line begins so) is served by the SOCKS5 code instead of the HTTP
// parser — one listener, one set of limits (header timeout and
// cap for the handshake, the connection cap). Only username/password
// (RFC 1929) is accepted: user "lnk", password the proxy's own secret
// (Config.SOCKSSecret, made by [Start], compared in constant time); a
// client offering no authentication gets 0xFF, a wrong secret RFC 1929's
// failure, and a proxy without a secret takes no SOCKS5 client. Only
// CONNECT is served (BIND and UDP ASSOCIATE get 0x07); its target,
// name, IPv4 or IPv6, goes through [ParseHost] and the same check, rate
// limit and dial as a CONNECT request, and is logged as kind "socks"
// with the same rule and reason. A sandbox is told
// ALL_PROXY=socks5h://lnk:<secret>@127.0.0.1:<relay port>.
//
// # Starting a proxy
//
// The sandbox builder calls [Start] with the agent's network [Grants]
// (kernel/sandbox converts caps.Compiled to them: the proxy links no
// caps) and the owner's HOME. Start makes ~/.lnk/agents/.net/<agent
// id>/ (0700, no link followed anywhere under ~/.lnk; a one-run folder
// for a run with no agent), binds proxy-<random>.sock (0600) there, one
// per sandbox, and serves it until [Running.Close]. A starter that makes
// the socket itself uses [Listen] (the same folder, name and modes) and
// passes it as [Options].Listener; a caller that holds a listener uses
// [RulesFrom], [New] and [Proxy.Serve]. cmd/lnk-netbroker wraps Start
// for a process of its own: kernel/sandbox makes its socket with
// [Listen] and hands it over as an fd (--listen-fd), its grants as JSON
// on stdin and then [Told] — the proxy's secret and the sealed secrets'
// placeholders, chosen by kernel/sandbox with [NewSecret] and
// [NewPlaceholder] — so the sandbox starts without waiting for the
// proxy; SIGTERM stops it. Run alone, it binds its own socket and
// prints its path and [Told] on stdout. [Options].Sealed
// names the sealed secrets granted to the agent and the [SealedSource]
// their values come from; Start serves their routes.
//
// # Sealed secrets
//
// [Sealed] is the route a sealed secret's $LNK_SEALED_<NAME>_URL names:
// /_link/s/<route secret>/sealed/<NAME>/…. The sandbox holds only a
// placeholder ([NewPlaceholder]); the route takes the value from a
// [SealedSource] (sealedgrant.NetClient, over its channel to the
// keybroker) with its grant ([sealedgrant.Seal]: the host and the headers the host
// authenticates with, Authorization by default), sends the request over
// https to the secret's own host alone — at addresses that must all be
// public, with the placeholder replaced in those headers alone, never in
// a body, a query, a path or another header, so nothing the host stores,
// transforms or answers from them carries the value; a request with the
// placeholder in another header or the query and in none of those is
// refused, naming the header to grant — and replaces the
// value with the placeholder in what comes back. It asks for an
// uncompressed, whole answer (Accept-Encoding: identity; the sandbox's
// Range and If-Range are not passed) and refuses one that is encoded or
// partial anyway (502), as the scrub reads the value only written out
// whole. It never follows a redirect and never uses plain http; a
// placeholder sent to any other host goes as it is. A host that
// reflects the credentials it was sent, transformed (base64, split), is
// beyond what any proxy can check.
//
// # Inference only
//
// A model's key and a local model (Config.LocalModelPorts) serve
// inference calls alone ([FilterInference]). The model's key is the
// sealed secret named for the agent the grants name,
// AGENT_<AGENT>_MODEL_KEY ([ModelKeyName]): [Start] sets
// Sealed.Inference for it and for no other secret, and its value is
// asked of the keybroker only for a call that passed. Inference calls
// are messages, chat completions, completions, responses, embeddings,
// audio transcriptions and the models list, each with the list of the
// request fields it passes, kept as data in inference_api.go: a field
// not in its call's list is dropped (it can only narrow what the
// provider does; the log counts them), a field known to make the
// provider search or fetch (web_search_options, search_parameters,
// plugins, …) and a model known to search on its own (search-preview,
// deep-research, Sonar, :online, …) are refused with the reason; a tool
// of a type the agent doesn't run itself (web search, web fetch, code
// execution, MCP servers, any type the list doesn't know) is removed,
// and content the provider would fetch by URL is refused.
// A local model's admin API (pull, delete, …) gets a 403, and CONNECT to
// it is refused.
//
// # Decisions
//
// For each request: the target is parsed strictly ([ParseTarget],
// [ParseHost]: odd IPv4 spellings are normalised to the address they
// mean; NUL, userinfo, zones, Unicode names and overflowing numbers are
// refused); an absolute-form request's Host header must name its URL's
// host; the host must be granted ([internet] hosts — exact, or "*."
// and a domain of two labels or more, never the bare domain — on ports
// 80 and 443, [internet] tcp host:port endpoints, [lan] hosts,
// [localhost] ports); a name is resolved once and every answer judged by
// [Classify] (loopback, unspecified, RFC 1918, CGNAT, link-local,
// multicast, broadcast, reserved, ULA, site-local, cloud metadata, this
// machine's own addresses, and every IPv6 form carrying an IPv4 address,
// judged as that address); one forbidden answer refuses the name; the
// dial goes only to the checked addresses; [internet] per_minute caps
// tunnels and requests. Every refusal is a [*Refusal]: a status (400,
// 403, 408, 429, 431, 502), a kind, one line of reason and the `lnk
// agent allow …` command that would allow it, answered to the client and
// logged once.
//
// # Security
//
// Holds: the sandbox's network grants, its socket, its own secret (the
// SOCKS5 password and the sealed routes' path secret), (through
// Config.Routes) the routes of Link's own bridges, and an rtnetlink
// socket on which it knows this machine's own addresses ([OwnWatch]:
// opened, and the addresses listed, before lnk-netbroker's seccomp
// filter, which refuses netlink sockets; only read, and sent a new list
// request after an overflow, afterwards). A proxy that cannot list them
// does not start; one that cannot tell, at a check, whether an address
// is own refuses it. May: resolve names,
// dial checked TCP addresses, accept on its own socket, and ask its
// [SealedSource] (the keybroker, on a channel it was handed) for a
// sealed secret's value at each request on that secret's route (the
// model's key's only for an inference call). Trusts: the
// grants it was started with and the owner's HOME folder; nothing a
// sandboxed client sends. Refuses: every host, port and address class
// not granted; metadata services and this machine's own addresses
// always; requests it cannot parse strictly; a SOCKS5 client without
// the secret, and SOCKS5's BIND and UDP ASSOCIATE; headers over 32 KiB; a
// client that takes over 10 s to send its headers; more than 256
// connections at once; a forwarded answer's head over 256 KiB; a local
// model's port reached by a name that resolves to loopback (it is
// reached as localhost or a loopback address alone). A forward ends
// with its client, and a tunnel whose client ended ends once its server
// is silent for 30 s. It never follows a redirect (the client's next
// request is checked like any other), never logs a body, a header's
// value, a query or a route's path, and links no os/exec.
package netbroker
