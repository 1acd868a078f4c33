package readpath

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/graph/model"
)

// The fast path's scalar writers write what gqlgen's marshalers write.
func TestFastScalarsMatchMarshalers(t *testing.T) {
	var fr fastRenderer
	same := func(name string, write func(), m graphql.Marshaler) {
		t.Helper()
		fr.buf = new(bytes.Buffer)
		write()
		var want bytes.Buffer
		m.MarshalGQL(&want)
		if fr.buf.String() != want.String() {
			t.Errorf("%s: wrote %q, the marshaler %q", name, fr.buf.String(), want.String())
		}
	}
	for _, s := range []string{"", "plain", `quo"te`, `back\slash`, "tab\tcr\rlf\n", "\x00\x01\x1f\x7f", "émoji 🎉 \u2028", "invalid \xff\xfe utf-8", "</script>&"} {
		same("string "+s, func() { fr.str(s) }, graphql.MarshalString(s))
	}
	for _, n := range []int{0, 1, -1, 42, math.MaxInt64, math.MinInt64} {
		same("int", func() { fr.int(n) }, graphql.MarshalInt(n))
	}
	for _, v := range []bool{true, false} {
		same("bool", func() { fr.bool(v) }, graphql.MarshalBoolean(v))
	}
	same("null", fr.null, graphql.Null)
	for _, tm := range []time.Time{time.UnixMilli(0), time.UnixMilli(1795560598272).In(time.FixedZone("x", 3600)), {}} {
		same("time", func() { fr.time(tm) }, model.MarshalTime(tm))
	}
	for _, v := range []model.Visibility{model.VisibilityPublic, model.VisibilityOnlyTo, model.VisibilityNotTo} {
		same("visibility", func() { fr.str(string(v)) }, v)
	}
}
