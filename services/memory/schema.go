package memory

// schema is the index's whole schema. An index whose sqlite_schema is
// not exactly what these statements make (checked at every open) is
// refused: it was not made by Link, or was changed since.
var schema = []string{
	`CREATE TABLE docs(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, title TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL, ino INTEGER NOT NULL, body TEXT NOT NULL) STRICT`,
	`CREATE VIRTUAL TABLE chunks USING fts5(text, tokenize='unicode61')`,
	`CREATE TABLE deleted(id INTEGER PRIMARY KEY, path TEXT NOT NULL, title TEXT NOT NULL, at INTEGER NOT NULL) STRICT`,
	// A chunk's vector (its rowid's), little-endian float32s of length
	// 1, from the model's embeddings; a chunk has none until the model
	// answers.
	`CREATE TABLE vecs(id INTEGER PRIMARY KEY, v BLOB NOT NULL) STRICT`,
}

// schemaV1 is version 1's schema (before vectors): an index of it, and
// exactly it, is emptied and made again at version 2, never used half.
var schemaV1 = schema[:3]

// applicationID marks a Link Memory index ("lnkm").
const applicationID = 0x6c6e6b6d

// schemaVersion is the index's PRAGMA user_version.
const schemaVersion = 2

// A chunk's rowid is its document's id shifted left by chunkBits, plus
// its place in the document: a document's chunks are one rowid range,
// found and removed without a scan. A 1 MiB document has fewer chunks
// than 1<<chunkBits (Split cuts at most chunkSize bytes, at least half).
const chunkBits = 16

// maxDeleted is how many deleted documents' paths and titles are kept
// for list {since}.
const maxDeleted = 10000
