// Package keybroker is lnk-keybroker: the process that holds the owner's
// secrets file and the agents' keys, outside every sandbox, and answers
// the kernel over internal/wire.
//
// # Starting it
//
// The kernel starts cmd/lnk-keybroker with internal/brokerproc:
//
//	fd 3  its channel to the kernel (SOCK_SEQPACKET, internal/wire)
//	fd 4  ~/.lnk/agents/.keys, an O_DIRECTORY fd (0700), opened without
//	      following a link ([OpenKeysDir] makes and opens it)
//	fd 5  ~/.lnk/secrets.toml, O_RDONLY (secrets.OpenFile opens it); left
//	      out (LNK_BROKER_FDS=1) when there is no such file
//
// and talks to it with a [Client]. Its requests ([KernelTable]):
// [SpecMakeAgentKey] makes an agent's key for this start and writes it to
// .keys/<agent id>.json (0600); [SpecDropAgentKey] removes it at stop;
// [SpecProve] answers a proof's challenge with an agent's key;
// [SpecCheckProof] checks a proof's answer; [SpecReloadSecrets] hands a
// fresh secrets.toml fd after `lnk secret` changed it; [SpecNetChannel]
// (once) hands the channel the netbroker will speak on, bound to the
// agent its hander names (lnk sandbox run), which gives the other end to
// the netbroker; it answers with that agent's sealed secrets' names. On
// that channel alone ([NetTable]) [SpecSealedSecret] hands a sealed
// secret of the channel's agent, in a sealed memfd, with its grant: the
// one host and the request headers it goes in there (Authorization
// unless the grant names others). That request, its reply and the
// netbroker's client of it (NetClient) are package internal/sealedgrant's,
// which this server imports: the netbroker links sealedgrant, never
// this package. Started with --agent ID
// ([NewForAgent]: a run's own broker), it keeps only that agent's sealed
// secrets of the file.
//
// # Security
//
// Holds: the secrets file's fd, the keys folder's fd, each started
// agent's key (as [secret.Value]s), and the channels. May: read the
// secrets file it was handed; make, read and remove files in the keys
// folder, never through a link; make memfds. It confines itself before
// serving: landlock allows nothing but reading and writing beneath the
// keys folder, and seccomp refuses exec and every socket (its channels
// are inherited, it makes none). Trusts: the kernel, or lnk handing the
// netbroker's channel, for which agent is starting and who owns it; never
// the netbroker for which agent asks. Refuses, each logged once with its
// reason and never a value: a sealed secret asked on any channel but the
// netbroker's; on that channel, every name its agent does not hold
// (another agent's, a plain one, none by that name, or anything asked for
// another agent ID), all with one and the same answer, so the asker
// learns no secret's existence; a channel bound to another agent than a
// run's broker serves; a malformed agent ID; a proof for another agent,
// owner or purpose; a key file that is a link or not the broker's.
// A key never crosses a channel: proofs are made and checked here.
package keybroker
