package guest

import (
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/exportcheck"
)

func TestExportNames(t *testing.T) {
	exportcheck.Check(t, ".", abi.RequiredExports...)
}
