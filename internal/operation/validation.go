package operation

import (
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// maxValidationErrors is the most errors validation reports for one
// document. gqlparser's OverlappingFieldsCanBeMerged reports every
// conflicting pair: 150 copies of `user(name: …) { id }`, a 3.8 KB
// document within the document limits, answered 11 175 errors, 2.7 MB.
// A client fixing its document needs the first few.
const maxValidationErrors = 100

// validationRules are gqlparser's default rules, reporting at most
// maxValidationErrors errors together. gqlgen asks for a fresh set for
// each document it validates, so the count is the document's.
func validationRules() *rules.Rules {
	reported := 0
	capped := rules.NewRules()
	for name, rule := range rules.NewDefaultRules().GetInner() {
		capped.AddRule(name, func(events *core.Events, addError core.AddErrFunc) {
			rule(events, func(options ...core.ErrorOption) {
				if reported < maxValidationErrors {
					reported++
					addError(options...)
				}
			})
		})
	}
	return capped
}
