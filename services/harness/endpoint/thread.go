package endpoint

import "lnk.dev/lnk/services/harness/store"

// checkThread is the one rule of a thread's name, the store's.
var checkThread = store.CheckThread
