package wayin

import (
	"fmt"
	"strconv"
)

var sprintf = fmt.Sprintf

func itoa(n int) string { return strconv.Itoa(n) }
