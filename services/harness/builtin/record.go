package builtin

import "errors"

// Record is what a running `lnk model builtin` leaves in
// ~/.lnk/models/builtin.json (600), so `lnk model list` finds it.
type Record struct {
	URL      string `json:"url"` // http://127.0.0.1:<port>/v1
	Port     int    `json:"port"`
	PID      int    `json:"pid"`
	Obedient bool   `json:"obedient,omitempty"`
}

// RecordName is the record's file name in ~/.lnk/models.
const RecordName = "builtin.json"

// WriteRecord writes r atomically as ~/.lnk/models/builtin.json, 600,
// the folders 700, never through a link. home is $HOME.
func WriteRecord(home string, r Record) error { return errors.New("not built yet") }

// ReadRecord reads the record; os.ErrNotExist (wrapped) when there is none.
func ReadRecord(home string) (Record, error) { return Record{}, errors.New("not built yet") }

// RemoveRecord removes the record if it still names pid.
func RemoveRecord(home string, pid int) error { return errors.New("not built yet") }
