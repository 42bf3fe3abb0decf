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
