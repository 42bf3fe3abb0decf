package webhookcheck

import (
	"bytes"
	"crypto/subtle"
	"runtime"
	"time"

	"lnk.dev/lnk/internal/secret"
)

// Keeper is lnk-webhook's hold on the secrets of its one webhook between
// checks: the secrets a check comes with are compared (in constant time)
// with those the last one came with, and the keys made from them are
// made again only when they differ (a roll, roll --done). It never holds
// more than one webhook's secrets, as it is only ever handed one's.
type Keeper struct {
	text *secret.Value // the secrets as the last check's frame held them
	s    Secrets
	k    keys
}

// Check checks req at now with the secrets raw (WriteSecrets' form),
// which it zeroes.
func (kp *Keeper) Check(raw []byte, req Request, now time.Time) Verdict {
	defer clear(raw)
	same := kp.text != nil && subtle.ConstantTimeCompare(kp.text.Bytes(), raw) == 1
	runtime.KeepAlive(kp.text)
	if !same {
		kp.Destroy()
		s, err := ReadSecrets(bytes.NewReader(raw))
		if err != nil {
			return refuse(StatusServiceUnavailable, "the webhook's secret can't be read")
		}
		text, err := secret.New(append([]byte(nil), raw...))
		if err != nil {
			s.Destroy()
			return refuse(StatusServiceUnavailable, "the webhook's secret can't be held")
		}
		kp.s, kp.text = s, text
	}
	return kp.k.check(kp.s, req, now)
}

// Destroy zeroes everything kept.
func (kp *Keeper) Destroy() {
	kp.k.destroy()
	kp.s.Destroy()
	kp.text.Destroy()
	*kp = Keeper{}
}
