package initstage_test

import (
	"errors"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/initstage"
)

func TestParsePlanRefuses(t *testing.T) {
	for _, bad := range []string{
		``, `{}`, `{"argv":["sh"]}`,
		`{"argv":["/bin/sh"],"paths":[{"path":"usr","read":true}]}`,
		`{"argv":["/bin/sh"],"paths":[{"path":"/usr/../etc","read":true}]}`,
		`{"argv":["/bin/sh"],"paths":[{"path":"/usr"}]}`,
		`{"argv":["/bin/sh"],"relay":{"port":0,"socket":"/s"}}`,
		`{"argv":["/bin/sh"],"relay":{"port":1,"socket":"s"}}`,
		`{"argv":["/bin/sh"]` + strings.Repeat(" ", initstage.MaxPlan) + `}`,
	} {
		if _, err := initstage.ParsePlan([]byte(bad)); !errors.Is(err, initstage.ErrBadPlan) {
			t.Errorf("%.60q: got %v, want ErrBadPlan", bad, err)
		}
	}
}
