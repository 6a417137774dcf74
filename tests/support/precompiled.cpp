// The translation unit that builds tests/support/precompiled.h's precompiled header.
