// SPDX-License-Identifier: Apache-2.0
// What a build was made from, compiled in as C string constants because
// Swift's compilation conditions carry no values: the version (the VERSION
// file) and the git revision, defined on the compiler's command line by
// Package.swift (`swift build`) and scripts/build-pi. Only BuildInfo.c sees
// the definitions, so a new revision recompiles that one file.
#ifndef WRISTLINK_CBUILDINFO_H
#define WRISTLINK_CBUILDINFO_H

/// The release, e.g. "0.1.0".
const char *wl_build_version(void);
/// The git revision (abbreviated hash, "-dirty" with uncommitted changes),
/// or "unknown" for a build made without git.
const char *wl_build_revision(void);

#endif
