// Package scmrights is Link's one receiver of file descriptors passed in
// SCM_RIGHTS: every process that takes fds from a socket (the kernel's
// request loop, internal/wire's channels, internal/connpass) reads them
// through [Recv], so the checks below are made once, in one place.
//
// # Security
//
// A message's fds are the sender's to choose, and a received fd is open
// in the receiver from the moment recvmsg returns: one the receiver then
// forgets is a leak it cannot see. So [Recv]
//
//   - receives with MSG_CMSG_CLOEXEC, so no fd is inherited by a child
//     started before the receiver decides about it;
//   - refuses control data the kernel cut short (MSG_CTRUNC: more fds
//     than the buffer, [Space], holds);
//   - refuses more fds than the caller's cap, and data cut short
//     (MSG_TRUNC: a message over the caller's buffer);
//   - refuses any control message but SCM_RIGHTS (SCM_CREDENTIALS,
//     anything else), and an SCM_RIGHTS whose length is not a whole
//     number of fds, or a header whose length runs past the data;
//   - on every refusal closes every fd that arrived, and returns none.
//
// A refusal is a *[Refusal] with its reason; the socket is still good.
// [Parse], the control-data parser, is fuzzed (FuzzParse, seeds in
// testdata).
package scmrights
