// Package connpass hands an accepted stream connection from one process
// to another, with what the first already read of it: one message on a
// SOCK_SEQPACKET channel, those bytes as its data and the connection's fd
// attached (SCM_RIGHTS). The proxy (helpers/netbroker) passes a sandbox's
// request for its tools' route to the tool bridge (services/toolbridge)
// this way, so the bridge answers the client on its own connection and
// the proxy relays nothing back: one hop fewer each way, and no second
// connection made for each call. And the sandbox's first stage
// (internal/initstage) hands the proxy its listener on 127.0.0.1 this way,
// once, on a channel of its own ([PassListener], [Receiver.ReceiveListener]),
// so the proxy accepts the sandbox's connections itself.
//
// # Security
//
// The receiver trusts the channel's sender no further than the sandbox
// the connection comes from: a message is taken only with exactly one fd
// attached, that fd a connected stream socket (AF_UNIX, AF_INET or
// AF_INET6, not listening), and its bytes at most [MaxHead]; anything
// else — no fd, two, a file, a pipe, a datagram or listening socket,
// control data the kernel cut short — is refused with its reason and
// every fd that came with it closed. The connection is then read as any
// client's is: holding its fd gives the receiver nothing the client
// could not already send it. A handed listener is taken only as one TCP
// socket listening on a loopback address, with at most one pipe beside it
// (the lifeline, held and never read); anything else is refused, every
// fd closed. The fds are close-on-exec on both sides
// (MSG_CMSG_CLOEXEC). Messages are received through internal/scmrights,
// Link's one SCM_RIGHTS receiver, which refuses control data cut short,
// over the fd cap or other than SCM_RIGHTS before the checks above.
package connpass
