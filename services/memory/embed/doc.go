// Package embed is Link Memory's client of its model's embeddings: an
// OpenAI-compatible POST /v1/embeddings on one loopback address, chosen
// before the service starts ($LNK_MEMORY_MODEL, security.txt "Memory").
// Until the model answers, and whenever it stops, the engine searches by
// words; a model that fails is asked again at most every [Retry].
//
// # Security
//
// Holds one address, judged by internal/netclass (Link's one classifier)
// and refused unless it is a loopback address: a name, or any other
// class, is never dialled. Every connection goes to that address
// whatever a URL or an answer says; a redirect is refused, never
// followed; at most [MaxAnswer] bytes of an answer are read, and one
// longer fails whole. An answer's vectors are checked (one per text, in
// order, one length, finite) before they are used. Trusts the model for
// nothing but numbers.
package embed
