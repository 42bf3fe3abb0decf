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
// (once) hands the channel the netbroker will speak on, and the kernel
// gives the other end to the netbroker. On that channel alone
// ([NetTable]) [SpecSealedSecret] hands a sealed secret's value, in a
// sealed memfd, with its grant: the one host and the request headers it
// goes in there (Authorization unless the grant names others).
//
// # Security
//
// Holds: the secrets file's fd, the keys folder's fd, each started
// agent's key (as [secret.Value]s), and the channels. May: read the
// secrets file it was handed; make, read and remove files in the keys
// folder, never through a link; make memfds. It confines itself before
// serving: landlock allows nothing but reading and writing beneath the
// keys folder, and seccomp refuses exec and every socket (its channels
// are inherited, it makes none). Trusts: the kernel for which agent is
// starting and who owns it. Refuses, each logged once with its reason and
// never a value: a sealed secret asked on any channel but the netbroker's;
// a secret not granted to the asking agent's ID; a plain secret (never
// given to an agent); a malformed agent ID; a proof for another agent,
// owner or purpose; a key file that is a link or not the broker's.
// A key never crosses a channel: proofs are made and checked here.
package keybroker
