package redisstore_test

import (
	"testing"

	"github.com/socialgw/gateway/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }
