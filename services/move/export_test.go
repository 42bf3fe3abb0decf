package move

import (
	"crypto/sha256"
	"encoding/hex"
)

// RecordArchivesForTest writes the record of agent name's backup as if
// lnk agent backup had written the archives now in its .lnk-backup: so a
// test can show what the archive reader refuses on its own, past the
// record's check.
func RecordArchivesForTest(home, name, id string, archives map[string][]byte) error {
	rec := &record{ID: id, Made: "test"}
	for n, b := range archives {
		rec.Archives = append(rec.Archives, sumOf(n, b))
	}
	return writeRecord(home, name, rec)
}

func sumOf(name string, b []byte) archiveSum {
	s := sha256.Sum256(b)
	return archiveSum{Name: name, Size: int64(len(b)), SHA256: hex.EncodeToString(s[:])}
}

// SetPlaceFault has each placing ask f before its step n, failing it
// when f returns an error; the returned func puts things back.
func SetPlaceFault(f func(n int) error) func() {
	old := placeFault
	placeFault = f
	return func() { placeFault = old }
}

// SetAsideCopied has f told each path copied aside to .sending, between
// its copy and its sending; the returned func puts things back.
func SetAsideCopied(f func(path string)) func() {
	old := asideCopied
	asideCopied = f
	return func() { asideCopied = old }
}

// ParseJournalForTest reads a placing journal back as a recovery does.
func ParseJournalForTest(b []byte) error {
	_, err := parseJournal(b)
	return err
}
