package tablelog

import (
	"errors"
	"fmt"
	"strconv"

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
)

// Sentinels for errors.Is: errors.Is(err, tablelog.ErrStaleVersion) holds for any Error
// whose reason is STALE_VERSION, whatever its message and metadata.
var (
	ErrIllegalMove     = &Error{Reason: ReasonIllegalMove}
	ErrNotYourTurn     = &Error{Reason: ReasonNotYourTurn}
	ErrStaleVersion    = &Error{Reason: ReasonStaleVersion}
	ErrGameNotFound    = &Error{Reason: ReasonGameNotFound}
	ErrGameOver        = &Error{Reason: ReasonGameOver}
	ErrNothingToUndo   = &Error{Reason: ReasonNothingToUndo}
	ErrNothingToRedo   = &Error{Reason: ReasonNothingToRedo}
	ErrInvalidNotation = &Error{Reason: ReasonInvalidNotation}
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

	status *status.Status
}

func (e *Error) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("tablelog: %s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("tablelog: %s %s: %s", e.Code, e.Reason, e.Message)
}

// Is matches the sentinels by reason.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Reason != "" && t.Reason == e.Reason
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
