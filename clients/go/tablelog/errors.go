package tablelog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Stable reasons of the server's google.rpc.ErrorInfo (domain "tablelog.v1").
const (
	ReasonIllegalMove     = "ILLEGAL_MOVE"
	ReasonNotYourTurn     = "NOT_YOUR_TURN"
	ReasonStaleVersion    = "STALE_VERSION"
	ReasonGameNotFound    = "GAME_NOT_FOUND"
	ReasonGameOver        = "GAME_OVER"
	ReasonNothingToUndo   = "NOTHING_TO_UNDO"
	ReasonNothingToRedo   = "NOTHING_TO_REDO"
	ReasonInvalidNotation = "INVALID_NOTATION"
	// An amendment after which a later move no longer applies (metadata "revision",
	// "notation", "rule", "moves_to_drop").
	ReasonAmendBreaksLaterMove = "AMEND_BREAKS_LATER_MOVE"

	// UNAUTHENTICATED: no token, or one the server does not accept.
	ReasonTokenMissing = "TOKEN_MISSING"
	ReasonTokenUnknown = "TOKEN_UNKNOWN"
	ReasonTokenExpired = "TOKEN_EXPIRED"
	ReasonTokenRevoked = "TOKEN_REVOKED"
	// PERMISSION_DENIED: the caller's role does not allow the call (metadata "role", "rpc").
	ReasonRoleForbids = "ROLE_FORBIDS"
	// PERMISSION_DENIED: a view of the game the caller may not see (metadata "asked",
	// "allowed").
	ReasonViewNotAllowed = "VIEW_NOT_ALLOWED"
)

// Sentinels for errors.Is: errors.Is(err, tablelog.ErrStaleVersion) holds for any Error
// whose reason is STALE_VERSION, whatever its message and metadata.
var (
	ErrIllegalMove          = &Error{Reason: ReasonIllegalMove}
	ErrNotYourTurn          = &Error{Reason: ReasonNotYourTurn}
	ErrStaleVersion         = &Error{Reason: ReasonStaleVersion}
	ErrGameNotFound         = &Error{Reason: ReasonGameNotFound}
	ErrGameOver             = &Error{Reason: ReasonGameOver}
	ErrNothingToUndo        = &Error{Reason: ReasonNothingToUndo}
	ErrNothingToRedo        = &Error{Reason: ReasonNothingToRedo}
	ErrInvalidNotation      = &Error{Reason: ReasonInvalidNotation}
	ErrTokenMissing         = &Error{Reason: ReasonTokenMissing}
	ErrTokenUnknown         = &Error{Reason: ReasonTokenUnknown}
	ErrTokenExpired         = &Error{Reason: ReasonTokenExpired}
	ErrTokenRevoked         = &Error{Reason: ReasonTokenRevoked}
	ErrRoleForbids          = &Error{Reason: ReasonRoleForbids}
	ErrViewNotAllowed       = &Error{Reason: ReasonViewNotAllowed}
	ErrAmendBreaksLaterMove = &Error{Reason: ReasonAmendBreaksLaterMove}
)

// Sentinels that match by status code whatever the reason: errors.Is(err,
// tablelog.ErrUnauthenticated) holds for every refusal of who the caller is, and
// ErrPermissionDenied for every refusal of what a known caller asked.
var (
	ErrUnauthenticated  = &Error{Code: codes.Unauthenticated}
	ErrPermissionDenied = &Error{Code: codes.PermissionDenied}
)

// Error is a failed call to the tablelog server: the gRPC status with the reason and
// metadata of its ErrorInfo detail ("rule" for ILLEGAL_MOVE, "current_version" for
// STALE_VERSION). Transport failures have an empty Reason.
type Error struct {
	Code                codes.Code
	Reason              string
	Domain              string
	Metadata            map[string]string
	Message             string
	BadRequest          *errdetails.BadRequest
	PreconditionFailure *errdetails.PreconditionFailure
	// TokenSource says, on UNAUTHENTICATED, where the refused token came from ("": none sent).
	TokenSource string

	status *status.Status
}

func (e *Error) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("tablelog: %s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("tablelog: %s %s: %s", e.Code, e.Reason, e.Message)
}

// Is matches the sentinels: by reason when the sentinel has one, else by status code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	switch {
	case !ok:
		return false
	case t.Reason != "":
		return t.Reason == e.Reason
	default:
		return t.Code != codes.OK && t.Code == e.Code
	}
}

// Explain puts the error in a sentence for a person: the server's words, the reason and
// facts that go with it, and for a refused token what to do about it.
func (e *Error) Explain() string {
	words := strings.TrimSuffix(e.Message, ".")
	reason := e.Reason
	if reason == "" {
		reason = codeName(e.Code)
	}
	switch e.Code {
	case codes.Unauthenticated:
		sent := "no token was sent"
		if e.TokenSource != "" {
			sent = "the token came from " + e.TokenSource
		}
		advice, ok := authenticationAdvice[e.Reason]
		if !ok {
			advice = giveAToken
		}
		return fmt.Sprintf("not signed in: %s (%s; %s). %s", words, reason, sent, advice)
	case codes.PermissionDenied:
		facts := []string{reason}
		if role := e.Role(); role != "" {
			facts = append(facts, "role "+role)
		}
		if rpc := e.RPC(); rpc != "" {
			facts = append(facts, "call "+rpc)
		}
		return fmt.Sprintf("not allowed: %s (%s)", words, strings.Join(facts, ", "))
	}
	if e.Reason == "" {
		return fmt.Sprintf("%s: %s", codeName(e.Code), e.Message)
	}
	return fmt.Sprintf("%s (%s): %s", codeName(e.Code), e.Reason, e.Message)
}

const (
	giveAToken = "Give a token with WithToken, $" + TokenEnv + " or `tablelog login`."
	newToken   = "Ask the club's owner for a new token and keep it with `tablelog login`."
)

// authenticationAdvice says what to do about each refusal of a token.
var authenticationAdvice = map[string]string{
	ReasonTokenMissing: giveAToken,
	ReasonTokenUnknown: "Check the token (is it for this server?). " + newToken,
	ReasonTokenExpired: newToken,
	ReasonTokenRevoked: newToken,
}

// codeNames are the canonical names of the status codes ("PERMISSION_DENIED"), as the server
// and the other clients spell them; grpc-go's String() says "PermissionDenied".
var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED",
}

func codeName(code codes.Code) string {
	if int(code) < len(codeNames) {
		return codeNames[code]
	}
	return code.String()
}

// Role is the caller's role in the club on PERMISSION_DENIED (ErrorInfo metadata "role").
func (e *Error) Role() string {
	return e.Metadata["role"]
}

// RPC is the refused call on PERMISSION_DENIED (ErrorInfo metadata "rpc").
func (e *Error) RPC() string {
	return e.Metadata["rpc"]
}

// GRPCStatus lets status.FromError and status.Code see the original status.
func (e *Error) GRPCStatus() *status.Status {
	if e.status == nil {
		return status.New(e.Code, e.Message)
	}
	return e.status
}

// Rule is the rule code of an ILLEGAL_MOVE ("" otherwise).
func (e *Error) Rule() string {
	return e.Metadata["rule"]
}

// CurrentVersion is the server's version carried by a STALE_VERSION error.
func (e *Error) CurrentVersion() (uint64, bool) {
	value, ok := e.Metadata["current_version"]
	if !ok {
		return 0, false
	}
	version, err := strconv.ParseUint(value, 10, 64)
	return version, err == nil
}

// Reason returns the ErrorInfo reason of err, or "" when err carries none.
func Reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// wrap turns a gRPC error into an *Error; nil stays nil, non-gRPC errors pass through.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	e := &Error{Code: st.Code(), Message: st.Message(), Metadata: map[string]string{}, status: st}
	for _, detail := range st.Details() {
		switch d := detail.(type) {
		case *errdetails.ErrorInfo:
			if e.Reason == "" {
				e.Reason = d.GetReason()
				e.Domain = d.GetDomain()
				for k, v := range d.GetMetadata() {
					e.Metadata[k] = v
				}
			}
		case *errdetails.BadRequest:
			e.BadRequest = d
		case *errdetails.PreconditionFailure:
			e.PreconditionFailure = d
		}
	}
	return e
}
