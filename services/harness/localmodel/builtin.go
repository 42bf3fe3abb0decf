package localmodel

import (
	"context"

	"lnk.dev/lnk/services/harness/builtin"
)

// FindBuiltin is the record of Link's built-in model when the one it
// names answers on its port as the built-in (GET /v1/models listing
// link-builtin, owned by link), within o's timeout. No record is an
// error that is os.ErrNotExist; a record whose port is silent, or
// answers as another server, is an error saying so. A caller that runs
// an agent on what it finds should refuse a record marked Obedient.
func FindBuiltin(ctx context.Context, home string, o Options) (builtin.Record, error) {
	r, err := builtin.ReadRecord(home)
	if err != nil {
		return builtin.Record{}, err
	}
	if err := newProber(o.Timeout).answersAsBuiltin(ctx, r); err != nil {
		return builtin.Record{}, err
	}
	return r, nil
}
