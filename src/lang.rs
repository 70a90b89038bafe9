//! What the shared decisions ask of the file's language about expressions: how to read the
//! argument of a clause (is it a plain name, an integer constant?) and how to write the few
//! expressions a translation builds (a condition's negation, a bound, an element of the
//! queue array). One implementation per language (`crate::c::lang::C`); the decisions
//! reach it as `Unit::lang`, so that none of them writes C.
//!
//! The rest of a language's part of the pipeline (sites, statements, facts, printing) is
//! described in docs/extending.md ("Adding a language").

/// How a structure is reached in an item or an expression: as a variable (`s.x`, `t%x`) or
/// through a pointer (`p->x`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Value,
    Pointer,
}

/// Expressions in one source language.
pub trait Language: Sync + Send {
    /// The language's name in messages (`C`, `C++`, `Fortran`).
    fn name(&self) -> &'static str;

    /// How the printer spells OpenMP's worksharing-loop construct (`for`, `do`).
    fn worksharing(&self) -> &'static str;

    /// Whether `s` is a plain variable name.
    fn is_identifier(&self, s: &str) -> bool;

    /// Whether `s` is an integer constant (`64`, `0x40`, `64u`; `64_8` in Fortran).
    fn is_int_literal(&self, s: &str) -> bool;

    /// Whether evaluating `e` may change something: an assignment, an increment, anything
    /// in parentheses that may be a call (conservative).
    fn has_side_effects(&self, e: &str) -> bool;

    /// Whether `e` assigns, increments or calls a function (a parenthesized operand alone
    /// does not count).
    fn writes_or_calls(&self, e: &str) -> bool;

    /// The variable a clause item starts with (`a` in `a[0:n]`, `s` in `s.x`).
    fn base_name<'e>(&self, item: &'e str) -> Option<&'e str>;

    /// Whether `name` is a function of the language's standard library (`sqrt`), which no
    /// routine of the file can be.
    fn is_library_function(&self, name: &str) -> bool;

    /// The names in a piece of directive text, in order.
    fn words<'t>(&self, text: &'t str) -> Vec<&'t str>;

    /// The variables an expression reads (names of called functions left out).
    fn identifiers<'e>(&self, expr: &'e str) -> Vec<&'e str>;

    /// A clause item that names a member of a structure: (structure, member, access).
    fn member_of<'i>(&self, item: &'i str) -> Option<(&'i str, &'i str, Access)>;

    /// The member `member` of the structure `base` reached by `access`.
    fn member(&self, base: &str, member: &str, access: Access) -> String;

    /// Whether clause item `item` names all of `base` (`s`, `*p`, `p[0:1]`).
    fn names_whole(&self, item: &str, base: &str) -> bool;

    /// Whether names differing only in the case of their letters are the same (Fortran).
    fn folds_case(&self) -> bool {
        false
    }

    /// Whether two names (variables, members) name the same thing.
    fn same_name(&self, a: &str, b: &str) -> bool {
        if self.folds_case() {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    }

    /// `e` in parentheses, as one operand.
    fn group(&self, e: &str) -> String {
        format!("({e})")
    }

    /// The value that is always true (`1`, `.true.`).
    fn truth(&self) -> &'static str;

    /// The negation of condition `e` (an operand: see [`Language::group`]).
    fn not(&self, e: &str) -> String;

    /// Both conditions (operands).
    fn and(&self, a: &str, b: &str) -> String;

    /// The smaller of `e` (an expression as written) and `bound`, for an expression without
    /// side effects (it may be evaluated twice).
    fn min(&self, e: &str, bound: u32) -> String;

    /// Element `index` of array `array` (an index of 0 is its first element).
    fn element(&self, array: &str, index: &str) -> String;

    /// The low bits of the integer `e` (an operand) under `mask` (`e & 63`).
    fn low_bits(&self, e: &str, mask: i64) -> String;

    /// The iterator specifier of `name` over `count` values from 0, in a
    /// `depend(iterator(…), …)`. C declares its type: Clang 19 and 22 crash instantiating a
    /// template whose directive has an iterator without one.
    fn iterator(&self, name: &str, count: i64) -> String;

    /// A zero-length array section of what pointer `p` points to (`p[:0]`), which maps
    /// nothing but finds (or attaches) the data `p` points to; None where the language has
    /// no such section.
    fn zero_length(&self, p: &str) -> Option<String>;

    /// The one object that pointer `p` points to, as an array section (`p[0:1]`).
    fn pointee(&self, p: &str) -> String;

    /// An integer result (`omp_target_is_present(…)`) as a condition: C reads it as is,
    /// Fortran's `if` clause and `.and.` need a LOGICAL.
    fn int_condition(&self, e: &str) -> String {
        e.to_string()
    }

    /// The address argument of `omp_target_is_present` for a `use_device` item: the item
    /// itself in C (a pointer, or an array that decays to its address); `pointer`: the item
    /// is a pointer value (a Fortran `type(c_ptr)`), else its data's address is taken.
    fn presence_address(&self, item: &str, _pointer: bool) -> String {
        item.to_string()
    }

    /// Whether a `deviceptr` item may be a variable other than a pointer (a Fortran array),
    /// whose device address is not passed by `is_device_ptr`.
    fn typed_device_pointers(&self) -> bool {
        false
    }
}

/// `name` as a key of a set of names: two names are the same name ([`Language::same_name`])
/// exactly when their keys are equal.
pub fn name_key<'n>(l: &dyn Language, name: &'n str) -> std::borrow::Cow<'n, str> {
    if l.folds_case() && name.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(name.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}
