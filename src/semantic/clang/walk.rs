//! The walk of libclang's cursors in the main file into the arena: extents checked, depth
//! and size bounded, variables and their types recorded once per declaration.

use super::{Construct, Node, VarEntry, is_acc_construct, take_string};
use crate::semantic::facts::{VarKind, VarType};
use clang_sys::*;
use std::os::raw::c_uint;

const MAX_DEPTH: usize = 256;
const MAX_NODES: usize = 4_000_000;

pub(super) struct Walk<'s> {
    pub(super) tu: CXTranslationUnit,
    pub(super) src: &'s str,
    pub(super) src_len: usize,
    /// The main file: cursors elsewhere (headers) are skipped, macro expansions in the main
    /// file are kept.
    pub(super) main: CXFile,
    pub(super) nodes: Vec<Node>,
    pub(super) stack: Vec<usize>,
    pub(super) vars: Vec<VarEntry>,
    pub(super) var_keys: crate::hash::HashMap<(bool, usize, String), usize>,
    /// `var_for` of each declaration seen, by libclang's declaration pointer: a reference
    /// to a known variable costs no spelling or location.
    pub(super) by_decl: crate::hash::HashMap<usize, usize>,
    /// The children of the open OpenACC constructs (`construct` reads them), innermost
    /// last: a construct's children are recorded while it is the innermost open node, and
    /// an inner construct's are taken off before its parent's next one comes.
    pub(super) construct_kids: Vec<usize>,
    /// Each open construct's node and where its children start in `construct_kids`.
    pub(super) open_constructs: Vec<(usize, usize)>,
    pub(super) truncated: Vec<usize>,
    pub(super) constructs: Vec<Construct>,
    pub(super) failed: bool,
    /// Per cursor kind: whether it is a statement and an expression, once asked.
    pub(super) kind_classes: Vec<Option<(bool, bool)>>,
    pub(super) api: Api,
    /// The cursors the traversal recursed into, innermost last, with their extent's end as
    /// libclang gave it and whether their children were walked per cursor (those the
    /// traversal gives are then left out); the root first (a walk per cursor has no root).
    pub(super) open: Vec<(CXCursor, usize, bool)>,
    /// The statements the traversal recursed into (`CXCursor.data[1]`).
    pub(super) entered: super::seen::Seen,
    /// The traversal met a cursor whose parent is not open.
    pub(super) lost: bool,
    /// Walk with a `clang_visitChildren` per cursor, not in one traversal.
    pub(super) per_cursor: bool,
    /// Main-file locations decoded without libclang (none: all through libclang).
    pub(super) main_range: Option<MainRange>,
    /// The extents of C names and integer literals read from the text (see
    /// [`token_extent`]) rather than asked of libclang.
    pub(super) token_extents: bool,
}

/// The main file's locations decoded without a call: a file location's raw encoding (a
/// clang `SourceLocation`, 32 bits, the top one set for macro locations) is its offset in the
/// source manager's address space, in which the main file's bytes take one range, from the
/// location of its start (`base`) to that of its end (`base + len`). Taken only when libclang
/// maps those ends and the middle so; any other location is asked of libclang.
pub(super) struct MainRange {
    /// The source manager (`ptr_data[0]`) of the locations this range decodes.
    sm: *const std::ffi::c_void,
    base: c_uint,
    len: c_uint,
}

impl MainRange {
    /// # Safety
    /// `tu` must be a translation unit of `api`'s library and `main` one of its files, whose
    /// text is `len` bytes.
    pub(super) unsafe fn new(
        api: &Api,
        tu: CXTranslationUnit,
        main: CXFile,
        len: usize,
    ) -> Option<MainRange> {
        let len = c_uint::try_from(len).ok()?;
        let start = unsafe { clang_getLocationForOffset(tu, main, 0) };
        let base = start.int_data;
        let end = base.checked_add(len)?;
        if base == 0 || start.ptr_data[0].is_null() || end >= 1 << 31 {
            return None;
        }
        let at = |off: c_uint| CXSourceLocation {
            ptr_data: start.ptr_data,
            int_data: base + off,
        };
        let mapped = [0, len / 2, len]
            .into_iter()
            .all(|off| unsafe { api.file_offset(at(off)) } == (main, off as usize));
        mapped.then_some(MainRange {
            sm: start.ptr_data[0],
            base,
            len,
        })
    }

    /// The offset in the main file of `loc`, when it is a file location there.
    fn offset(&self, loc: &CXSourceLocation) -> Option<usize> {
        let d = loc.int_data.wrapping_sub(self.base);
        (d <= self.len && loc.ptr_data[0] == self.sm).then_some(d as usize)
    }
}

/// The libclang functions the walk calls for every cursor, taken from the loaded library once:
/// clang-sys's wrappers look the library up in a thread-local on every call, which cost a sixth
/// of the walk's instructions.
#[derive(Clone, Copy)]
pub(super) struct Api {
    visit_children: unsafe extern "C" fn(CXCursor, CXCursorVisitor, CXClientData) -> c_uint,
    location: unsafe extern "C" fn(CXCursor) -> CXSourceLocation,
    extent: unsafe extern "C" fn(CXCursor) -> CXSourceRange,
    file_location:
        unsafe extern "C" fn(CXSourceLocation, *mut CXFile, *mut c_uint, *mut c_uint, *mut c_uint),
    referenced: unsafe extern "C" fn(CXCursor) -> CXCursor,
}

impl Api {
    /// The functions of this thread's libclang (`None`: none is loaded).
    pub(super) fn get() -> Option<Api> {
        let lib = clang_sys::get_library()?;
        let f = &lib.functions;
        Some(Api {
            visit_children: f.clang_visitChildren?,
            location: f.clang_getCursorLocation?,
            extent: f.clang_getCursorExtent?,
            file_location: f.clang_getFileLocation?,
            referenced: f.clang_getCursorReferenced?,
        })
    }

    /// [`file_offset`] through the function taken once.
    ///
    /// # Safety
    /// `loc` must come from the library `self` was taken from.
    unsafe fn file_offset(&self, loc: CXSourceLocation) -> (CXFile, usize) {
        let mut file: CXFile = std::ptr::null_mut();
        let mut off: c_uint = 0;
        unsafe {
            (self.file_location)(
                loc,
                &mut file,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut off,
            )
        };
        (file, off as usize)
    }
}

/// `clang_getRangeStart` and `clang_getRangeEnd` as libclang writes them (the fields of its
/// public structures), without a call each.
fn range_ends(r: &CXSourceRange) -> (CXSourceLocation, CXSourceLocation) {
    if r.ptr_data[0].is_null() {
        return (CXSourceLocation::default(), CXSourceLocation::default());
    }
    let at = |int_data| CXSourceLocation {
        ptr_data: r.ptr_data,
        int_data,
    };
    (at(r.begin_int_data), at(r.end_int_data))
}

/// The extent of a C name (`DeclRefExpr`) or integer literal whose location is the file
/// location `at` in the main file, from the text: such an expression is one token, its
/// location is that token's start, and libclang's extent ends where the lexer ends the
/// token. `None` (ask libclang) unless the token is plainly an identifier or a number that
/// the next byte ends: a `$`, `\` (an escaped newline or a universal character name), `?`
/// (a trigraph), `'` or `"` (a digit separator or a literal's prefix), a sign after an
/// exponent letter or a non-ASCII byte would need clang's lexer.
pub(super) fn token_extent(src: &str, at: usize, kind: CXCursorKind) -> Option<(usize, usize)> {
    let b = src.as_bytes();
    let first = *b.get(at)?;
    let number = kind == CXCursor_IntegerLiteral;
    let starts = if number {
        first.is_ascii_digit()
    } else {
        first.is_ascii_alphabetic() || first == b'_'
    };
    if !starts {
        return None;
    }
    let body = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || (number && c == b'.');
    let end = at + b[at..].iter().take_while(|&&c| body(c)).count();
    let plain = match b.get(end) {
        None => true,
        Some(b'$' | b'\\' | b'?' | b'\'' | b'"') => false,
        Some(b'+' | b'-') => !(number && matches!(b[end - 1], b'e' | b'E' | b'p' | b'P')),
        Some(&c) => c.is_ascii(),
    };
    plain.then_some((at, end))
}

/// The file and offset of `loc` (none when no libclang is loaded on this thread).
///
/// # Safety
/// `loc` must come from this thread's libclang.
pub(super) unsafe fn file_offset(loc: CXSourceLocation) -> (CXFile, usize) {
    Api::get().map_or((std::ptr::null_mut(), 0), |api| unsafe {
        api.file_offset(loc)
    })
}

fn is_scalar_kind(k: CXTypeKind) -> bool {
    (CXType_Bool..=CXType_NullPtr).contains(&k)
        || (CXType_Float128..=40).contains(&k)
        || k == CXType_Enum
        || k == CXType_Complex
}

/// Mapping-relevant facts of a declaration's type. `spelled`: the bounds written after a
/// parameter's name (libclang gives a parameter's type as written, `double[N]`, which C
/// adjusts to `double *`).
unsafe fn var_type(decl: CXCursor, spelled: Option<Vec<String>>) -> VarType {
    unsafe {
        let t = clang_getCanonicalType(clang_getCursorType(decl));
        let mut elem = t;
        let is_array = |k: CXTypeKind| {
            matches!(
                k,
                CXType_ConstantArray
                    | CXType_IncompleteArray
                    | CXType_VariableArray
                    | CXType_DependentSizedArray
            )
        };
        let param = clang_getCursorKind(decl) == CXCursor_ParmDecl && is_array(t.kind);
        let mut param_dims = None;
        if param {
            let spelled = spelled.unwrap_or_default();
            let mut dims = Vec::new();
            let mut d = t;
            while is_array(d.kind) && dims.len() < 16 {
                // The bound as spelled. Never its value: a macro or typedef that spells it
                // elsewhere may give another value in another configuration (`-D`).
                let text = spelled.get(dims.len()).filter(|x| !x.is_empty()).cloned();
                dims.push(text.filter(|_| d.kind == CXType_ConstantArray));
                d = clang_getCanonicalType(clang_getArrayElementType(d));
            }
            // No bound written after the name (`double VEC(a)`, `vec_t a`): a pointer of
            // unknown extent, as the syntactic mode sees it, rather than an error.
            param_dims = (!spelled.is_empty()).then_some(dims);
        }
        let kind = match t.kind {
            _ if param => VarKind::Pointer,
            CXType_Pointer | CXType_BlockPointer | CXType_MemberPointer => VarKind::Pointer,
            CXType_ConstantArray => {
                let n = clang_getArraySize(t);
                VarKind::Array {
                    extent: u64::try_from(n).ok(),
                }
            }
            CXType_IncompleteArray | CXType_VariableArray | CXType_DependentSizedArray => {
                VarKind::Array { extent: None }
            }
            CXType_Record => VarKind::Struct,
            k if is_scalar_kind(k) => VarKind::Scalar,
            _ => VarKind::Other,
        };
        let levels = array_levels(&mut elem);
        let dims = match t.kind {
            CXType_Pointer => {
                1 + array_levels(&mut clang_getCanonicalType(clang_getPointeeType(t)))
            }
            _ => levels,
        };
        VarType {
            kind,
            is_const: !param && clang_isConstQualifiedType(elem) != 0,
            incomplete: !param && clang_Type_getSizeOf(t) == CXTypeLayoutError_Incomplete as i64,
            restrict: t.kind == CXType_Pointer && clang_isRestrictQualifiedType(t) != 0,
            dims,
            extents: extents(t),
            param_dims,
        }
    }
}

/// Strips the array levels of `t` (at most 16), leaving its element type; returns how many.
unsafe fn array_levels(t: &mut CXType) -> u8 {
    let mut n = 0;
    while matches!(
        t.kind,
        CXType_ConstantArray
            | CXType_IncompleteArray
            | CXType_VariableArray
            | CXType_DependentSizedArray
    ) && n < 16
    {
        *t = unsafe { clang_getCanonicalType(clang_getArrayElementType(*t)) };
        n += 1;
    }
    n
}

/// See `VarType::extents`.
unsafe fn extents(t: CXType) -> Vec<Option<u64>> {
    unsafe {
        let mut out = Vec::new();
        let mut t = t;
        if t.kind == CXType_Pointer {
            out.push(None);
            t = clang_getCanonicalType(clang_getPointeeType(t));
        }
        while out.len() < 16 {
            match t.kind {
                CXType_ConstantArray => out.push(u64::try_from(clang_getArraySize(t)).ok()),
                CXType_IncompleteArray | CXType_VariableArray | CXType_DependentSizedArray => {
                    out.push(None)
                }
                _ => break,
            }
            t = clang_getCanonicalType(clang_getArrayElementType(t));
        }
        out
    }
}

extern "C" fn visitor(c: CXCursor, _parent: CXCursor, data: CXClientData) -> CXChildVisitResult {
    // SAFETY: `data` is the `Walk` passed to `clang_visitChildren` by `Walk::children`.
    let w = unsafe { &mut *(data as *mut Walk) };
    if w.failed {
        return CXChildVisit_Break;
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { w.visit(c) }));
    if r.is_err() {
        w.failed = true;
        return CXChildVisit_Break;
    }
    CXChildVisit_Continue
}

/// The visitor of the single traversal ([`Walk::walk`]): libclang recurses into the cursors
/// it is told to, and the subtrees whose last cursor has been seen are closed when a cursor
/// with another parent comes.
extern "C" fn recurse_visitor(
    c: CXCursor,
    parent: CXCursor,
    data: CXClientData,
) -> CXChildVisitResult {
    // SAFETY: `data` is the `Walk` passed to `clang_visitChildren` by `Walk::walk`.
    let w = unsafe { &mut *(data as *mut Walk) };
    if w.failed || w.lost {
        return CXChildVisit_Break;
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
        w.step(c, parent)
    }));
    match r {
        Ok(true) => CXChildVisit_Recurse,
        Ok(false) if w.lost => CXChildVisit_Break,
        Ok(false) => CXChildVisit_Continue,
        Err(_) => {
            w.failed = true;
            CXChildVisit_Break
        }
    }
}

/// Expressions that have no children in C (the single traversal's language), walked per
/// cursor or not: names and literals.
fn is_leaf(kind: CXCursorKind) -> bool {
    matches!(
        kind,
        CXCursor_DeclRefExpr
            | CXCursor_IntegerLiteral
            | CXCursor_FloatingLiteral
            | CXCursor_CharacterLiteral
            | CXCursor_StringLiteral
    )
}

/// `clang_equalCursors` without the call: libclang compares the kind and the three data
/// pointers (a declaration's second one, whether it is first in its group, is left out).
fn same_cursor(a: &CXCursor, b: &CXCursor) -> bool {
    a.kind == b.kind
        && a.data[0] == b.data[0]
        && a.data[2] == b.data[2]
        // SAFETY: reads a constant table of the loaded libclang.
        && (a.data[1] == b.data[1] || unsafe { clang_isDeclaration(a.kind) } != 0)
}

impl<'s> Walk<'s> {
    /// A walk of the main file `main` (text `src`) of `tu`, nothing walked yet.
    pub(super) fn new(
        api: Api,
        tu: CXTranslationUnit,
        src: &'s str,
        main: CXFile,
        per_cursor: bool,
        main_range: Option<MainRange>,
        token_extents: bool,
    ) -> Self {
        Walk {
            api,
            tu,
            src,
            src_len: src.len(),
            main,
            // A dense file has about one cursor per 3.5 bytes: sized for half of that, the
            // vector is copied once or twice as it grows instead of some twenty times.
            nodes: Vec::with_capacity((src.len() / 8).min(MAX_NODES)),
            stack: Vec::new(),
            vars: Vec::new(),
            var_keys: Default::default(),
            by_decl: Default::default(),
            construct_kids: Vec::new(),
            open_constructs: Vec::new(),
            truncated: Vec::new(),
            constructs: Vec::new(),
            failed: false,
            kind_classes: Vec::new(),
            open: Vec::new(),
            entered: Default::default(),
            lost: false,
            per_cursor,
            main_range,
            token_extents,
        }
    }
}

impl Walk<'_> {
    /// Walk the cursors under `root` in one traversal, libclang recursing; the nodes are
    /// those a [`children`](Self::children) call per cursor gives (that walk is done
    /// instead if a cursor's parent is not one the traversal entered).
    pub(super) unsafe fn walk(&mut self, root: CXCursor) {
        if self.per_cursor {
            return unsafe { self.children(root) };
        }
        self.open.push((root, 0, false));
        unsafe {
            (self.api.visit_children)(root, recurse_visitor, self as *mut Walk as CXClientData)
        };
        if self.lost {
            // Everything recorded so far is dropped: a fresh walk, per cursor.
            let main_range = self.main_range.take();
            *self = Walk::new(
                self.api,
                self.tu,
                self.src,
                self.main,
                true,
                main_range,
                self.token_extents,
            );
            return unsafe { self.children(root) };
        }
        while self.open.len() > 1 {
            self.close();
        }
        self.open.clear();
    }

    /// One cursor of the traversal; whether libclang is to recurse into it.
    ///
    /// Where the traversal's children are not those a `clang_visitChildren` of the cursor
    /// gives, that call gives them: libclang makes the cursor of some wrapper expressions
    /// from the expression they wrap, and recursing enumerates the wrapper's children.
    /// A `ConstantExpr` (a `case` label) then has itself as a child, as a pseudo-object
    /// expression has (with its semantic form after it); an opaque value (the `x` of GNU
    /// `x ?: y`, met twice) has none, where the cursor of its source has children.
    unsafe fn step(&mut self, c: CXCursor, parent: CXCursor) -> bool {
        unsafe {
            // The parent is one of the open cursors (those recursed into): the subtrees
            // above it are complete.
            loop {
                let &(top, _, per_cursor) = self.open.last().expect("the root stays open");
                if same_cursor(&top, &parent) {
                    if per_cursor {
                        return false;
                    }
                    break;
                }
                if self.open.len() == 1 {
                    // Not a tree that a walk per cursor gives: that walk is done instead.
                    self.lost = true;
                    return false;
                }
                self.close();
            }
            if same_cursor(&c, &parent) {
                // Its own child: the children are walked per cursor (none seen yet).
                if self.stack.last().is_none_or(|&p| p + 1 != self.nodes.len()) {
                    self.lost = true;
                    return false;
                }
                self.children(parent);
                if let Some(top) = self.open.last_mut() {
                    top.2 = true;
                }
                return false;
            }
            if !self.enter(c) {
                return false;
            }
            let n = &self.nodes[self.nodes.len() - 1];
            // A C name or literal has no children either way: it is not looked up.
            if (n.is_stmt || n.is_expr)
                && !is_leaf(n.kind)
                && !self.entered.insert(c.data[1] as usize)
            {
                // A statement met again (an opaque value's source): its children per cursor.
                self.children(c);
                self.close();
                return false;
            }
            true
        }
    }

    pub(super) unsafe fn children(&mut self, c: CXCursor) {
        unsafe { (self.api.visit_children)(c, visitor, self as *mut Walk as CXClientData) };
    }

    /// The file and offset of `loc`: a location in the main file from its raw encoding
    /// (see [`MainRange`]), any other through libclang.
    ///
    /// # Safety
    /// `loc` must come from this walk's translation unit.
    unsafe fn file_offset(&self, loc: CXSourceLocation) -> (CXFile, usize) {
        if let Some(m) = &self.main_range
            && let Some(off) = m.offset(&loc)
        {
            return (self.main, off);
        }
        unsafe { self.api.file_offset(loc) }
    }

    unsafe fn extent(&self, c: CXCursor) -> Option<(usize, usize)> {
        unsafe {
            let (start, end) = range_ends(&(self.api.extent)(c));
            let (f1, s) = self.file_offset(start);
            let (f2, e) = self.file_offset(end);
            (!f1.is_null() && f1 == f2 && s <= e && e <= self.src_len).then_some((s, e))
        }
    }

    unsafe fn var_for(&mut self, decl: CXCursor) -> usize {
        let id = decl.data[0] as usize;
        if let Some(&i) = self.by_decl.get(&id) {
            return i;
        }
        let i = unsafe { self.var_for_new(decl) };
        if id != 0 {
            self.by_decl.insert(id, i);
        }
        i
    }

    unsafe fn var_for_new(&mut self, decl: CXCursor) -> usize {
        unsafe {
            let name = take_string(clang_getCursorSpelling(decl));
            let (file, off) = self.file_offset((self.api.location)(decl));
            let main = !file.is_null() && file == self.main;
            let key = (main, off, name);
            if let Some(&i) = self.var_keys.get(&key) {
                return i;
            }
            let end = off + key.2.len();
            let spelled = main.then(|| {
                self.src
                    .get(off..end)
                    .filter(|t| *t == key.2)
                    .map(|_| crate::semantic::facts::spelled_dims(self.src, end))
                    .unwrap_or_default()
            });
            // No bound after the name: a macro may write the declarator around it, or a
            // typedef the array type.
            let spelled = match spelled {
                Some(s) if s.is_empty() && clang_getCursorKind(decl) == CXCursor_ParmDecl => {
                    super::macro_dims::spelled(self.tu, self.main, self.src, off, end)
                        .or_else(|| super::macro_dims::typedef_spelled(self.tu, decl))
                        .or(Some(s))
                }
                s => s,
            };
            let ty = var_type(decl, spelled);
            let decl_extent = if main {
                self.extent(decl).map(|(s, e)| s..e)
            } else {
                None
            };
            let i = self.vars.len();
            self.vars.push(VarEntry {
                name: key.2.clone(),
                ty,
                decl: main.then_some(off),
                decl_extent,
                invalid: clang_isInvalidDeclaration(decl) != 0,
            });
            self.var_keys.insert(key, i);
            i
        }
    }

    /// Whether cursors of `kind` are statements and expressions, asked of libclang once per
    /// kind: two of the dozen calls into libclang that each cursor costs.
    fn classes(&mut self, kind: CXCursorKind) -> (bool, bool) {
        // SAFETY: both only read a constant table of the loaded libclang.
        let ask = || unsafe { (clang_isStatement(kind) != 0, clang_isExpression(kind) != 0) };
        // Kinds are small numbers (under a thousand); another is asked each time.
        let Some(k) = usize::try_from(kind).ok().filter(|&k| k < 4096) else {
            return ask();
        };
        if self.kind_classes.len() <= k {
            self.kind_classes.resize(k + 1, None);
        }
        *self.kind_classes[k].get_or_insert_with(ask)
    }

    /// The walk per cursor: one `clang_visitChildren` for each cursor entered.
    unsafe fn visit(&mut self, c: CXCursor) {
        unsafe {
            if self.enter(c) {
                self.children(c);
                self.close();
            }
        }
    }

    /// Record cursor `c` (its parent the innermost open one) unless it is outside the main
    /// file or left out; whether its children are to be walked (it is then open until
    /// [`close`](Self::close)).
    unsafe fn enter(&mut self, c: CXCursor) -> bool {
        unsafe {
            if self.nodes.len() >= MAX_NODES {
                self.failed = true;
                return false;
            }
            let loc = (self.api.location)(c);
            let (file, at) = self.file_offset(loc);
            if file.is_null() || file != self.main {
                return false;
            }
            let token = match (&self.main_range, c.kind) {
                (Some(m), CXCursor_DeclRefExpr | CXCursor_IntegerLiteral)
                    if self.token_extents && m.offset(&loc).is_some() =>
                {
                    token_extent(self.src, at, c.kind)
                }
                _ => None,
            };
            let Some((start, end)) = token.or_else(|| self.extent(c)) else {
                return false;
            };
            // A construct's clause expressions (before its directive ends) are left out: the
            // tree is then the one a parse without `-fopenacc` gives, plus the constructs.
            if let Some(&p) = self.stack.last()
                && is_acc_construct(self.nodes[p].kind)
                && start < self.nodes[p].end
            {
                return false;
            }
            // `clang_getCursorKind` returns this field.
            let kind = c.kind;
            let var = match kind {
                CXCursor_VarDecl | CXCursor_ParmDecl => Some(self.var_for(c)),
                CXCursor_DeclRefExpr => {
                    let r = (self.api.referenced)(c);
                    match r.kind {
                        CXCursor_VarDecl | CXCursor_ParmDecl => Some(self.var_for(r)),
                        _ => None,
                    }
                }
                _ => None,
            };
            let (is_stmt, is_expr) = self.classes(kind);
            let idx = self.nodes.len();
            let parent = self.stack.last().copied();
            self.nodes.push(Node {
                kind,
                start,
                end,
                parent,
                var,
                is_stmt,
                is_expr,
            });
            if let Some(p) = parent
                && is_acc_construct(self.nodes[p].kind)
            {
                self.construct_kids.push(idx);
            }
            if self.stack.len() >= MAX_DEPTH {
                self.truncated.push(start);
                return false;
            }
            self.stack.push(idx);
            self.open.push((c, end, false));
            if is_acc_construct(kind) {
                self.open_constructs.push((idx, self.construct_kids.len()));
            }
            true
        }
    }

    /// Close the innermost open cursor, its children all walked.
    fn close(&mut self) {
        let (Some(idx), Some((_, end, _))) = (self.stack.pop(), self.open.pop()) else {
            return;
        };
        if is_acc_construct(self.nodes[idx].kind) {
            self.construct(idx);
        }
        // Clang ends the statements around a construct at its directive (a `for` whose
        // body is `#pragma acc loop` + loop): they span what the construct spans.
        if let Some(p) = self.nodes[idx].parent
            && self.nodes[idx].end > end
        {
            self.nodes[p].end = self.nodes[p].end.max(self.nodes[idx].end);
        }
    }

    /// Record an OpenACC construct; its node then spans its statement too, as a statement
    /// with its pragma does for the rest of the analysis.
    fn construct(&mut self, idx: usize) {
        let n = &self.nodes[idx];
        let directive = n.start..n.end;
        // Constructs close innermost first: the last one opened is this one.
        let top = self.open_constructs.pop();
        debug_assert_eq!(top.map(|t| t.0), Some(idx));
        let from = top.map_or(self.construct_kids.len(), |t| t.1);
        let stmt = self.construct_kids[from..]
            .iter()
            .rev()
            .map(|&k| &self.nodes[k])
            .find(|k| (k.is_stmt || k.is_expr) && k.start >= directive.end)
            .map(|k| k.start..k.end);
        self.construct_kids.truncate(from);
        if let Some(st) = &stmt {
            self.nodes[idx].end = self.nodes[idx].end.max(st.end);
        }
        self.constructs.push(Construct {
            kind: self.nodes[idx].kind,
            directive,
            stmt,
        });
    }
}
