// RETURN_IF_ERROR and ASSIGN_OR_RETURN for absl::Status / absl::StatusOr.
//
// Debian's Abseil (20220623) predates its own versions of these macros.
//
//   RETURN_IF_ERROR(expr);             // expr: absl::Status; returns it if !ok()
//   ASSIGN_OR_RETURN(lhs, expr);       // expr: absl::StatusOr<T>; on error
//                                      // returns its status, else lhs = value
//
// `lhs` may declare a variable (`ASSIGN_OR_RETURN(auto x, F());`) or name an
// existing one. Neither macro may be used as the body of an unbraced if/else.
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define RETURN_IF_ERROR(expr)                                     \
  do {                                                            \
    ::absl::Status zosched_status_ = (expr);                      \
    if (!zosched_status_.ok()) return zosched_status_;            \
  } while (false)

#define ZOSCHED_CONCAT_INNER_(a, b) a##b
#define ZOSCHED_CONCAT_(a, b) ZOSCHED_CONCAT_INNER_(a, b)

#define ASSIGN_OR_RETURN(lhs, expr) \
  ZOSCHED_ASSIGN_OR_RETURN_IMPL_(ZOSCHED_CONCAT_(zosched_statusor_, __LINE__), lhs, expr)

#define ZOSCHED_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()
