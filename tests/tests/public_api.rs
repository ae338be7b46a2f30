//! The public surface of the published crates, listed from their source with `syn` and
//! compared with the listing checked in under `tests/api/`, so that any change to the surface
//! shows in review. Rustdoc's JSON needs a nightly toolchain; this lister runs on stable.
//!
//! What it lists: from `src/lib.rs`, every `pub` item of every module reached through
//! `pub mod` (functions with their signatures, structs with their public fields, enums with
//! their variants, traits with their items, constants, statics, type aliases, macros), every
//! `pub use` as written, and the `pub` methods and associated items of inherent impls, each
//! under its module path. Not listed: `#[doc(hidden)]` items and modules (the versioned
//! `__private` among them), `#[cfg(test)]` code, the items of private modules (reachable only
//! through a `pub use`, which is listed) except the `pub` methods of their inherent impls
//! (listed under the module that declares the impl). Trait impls are not listed.
//!
//! After an intended change: `MCP_API_BLESS=1 cargo test -p mcp-tool-tests --test public_api`,
//! then review the diff of `tests/api/`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::{Attribute, ImplItem, Item, TraitItem, Visibility};

/// The crates whose surface is listed: (package directory, crate name).
const CRATES: &[(&str, &str)] = &[
    ("mcp-tool-runtime", "mcp_tool_runtime"),
    ("mcp-tool-client", "mcp_tool_client"),
    ("mcp-tool-macros", "mcp_tool_macros"),
    ("mcp-tool-store-sqlite", "mcp_tool_store_sqlite"),
    ("mcp-tool-store-postgres", "mcp_tool_store_postgres"),
    ("mcp-tool-store-redis", "mcp_tool_store_redis"),
    ("mcp-tool-oauth", "mcp_tool_oauth"),
    ("mcp-tool-otel", "mcp_tool_otel"),
    ("mcp-tool-skills", "mcp_tool_skills"),
    ("mcp-tool-rmcp", "mcp_tool_rmcp"),
    ("mcp-tool-lambda", "mcp_tool_lambda"),
    ("mcp-tool-cli", "mcp_tool_cli"),
];

fn is_pub(v: &Visibility) -> bool {
    matches!(v, Visibility::Public(_))
}

fn hidden_or_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        let text = a.to_token_stream().to_string().replace(' ', "");
        text.contains("doc(hidden)") || text == "#[cfg(test)]"
    })
}

/// Tokens as one line of text, spaced as `quote` spaces them.
fn text(t: &impl ToTokens) -> String {
    t.to_token_stream().to_string()
}

struct Lister {
    out: BTreeSet<String>,
    /// Inside a private module: only inherent impls' methods are listed.
    private: bool,
}

impl Lister {
    fn file(&mut self, path: &Path, module: &str) {
        let src =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = syn::parse_file(&src).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if hidden_or_test(&file.attrs) {
            return;
        }
        self.items(&file.items, path, module);
    }

    fn items(&mut self, items: &[Item], path: &Path, module: &str) {
        for item in items {
            self.item(item, path, module);
        }
    }

    fn add(&mut self, module: &str, line: String) {
        self.out.insert(format!("{module}: {line}"));
    }

    fn item(&mut self, item: &Item, path: &Path, module: &str) {
        if let Item::Mod(m) = item
            && !hidden_or_test(&m.attrs)
        {
            let name = format!("{module}::{}", m.ident);
            let was = self.private;
            if is_pub(&m.vis) {
                self.add(module, format!("mod {}", m.ident));
            } else {
                self.private = true;
            }
            match &m.content {
                Some((_, items)) => self.items(items, path, &name),
                None => {
                    let file = module_file(path, &m.ident.to_string(), &m.attrs);
                    self.file(&file, &name);
                }
            }
            self.private = was;
            return;
        }
        if self.private && !matches!(item, Item::Impl(_)) {
            return;
        }
        match item {
            Item::Fn(f) if is_pub(&f.vis) && !hidden_or_test(&f.attrs) => {
                self.add(module, text(&f.sig));
            }
            Item::Struct(s) if is_pub(&s.vis) && !hidden_or_test(&s.attrs) => {
                let fields: Vec<String> = s
                    .fields
                    .iter()
                    .filter(|f| is_pub(&f.vis))
                    .map(|f| match &f.ident {
                        Some(i) => format!("{i}: {}", text(&f.ty)),
                        None => text(&f.ty),
                    })
                    .collect();
                self.add(
                    module,
                    format!(
                        "struct {}{} {{ {} }}",
                        s.ident,
                        text(&s.generics),
                        fields.join(", ")
                    ),
                );
            }
            Item::Enum(e) if is_pub(&e.vis) && !hidden_or_test(&e.attrs) => {
                let variants: Vec<String> = e
                    .variants
                    .iter()
                    .filter(|v| !hidden_or_test(&v.attrs))
                    .map(|v| format!("{}{}", v.ident, text(&v.fields)))
                    .collect();
                self.add(
                    module,
                    format!(
                        "enum {}{} {{ {} }}",
                        e.ident,
                        text(&e.generics),
                        variants.join(", ")
                    ),
                );
            }
            Item::Trait(t) if is_pub(&t.vis) && !hidden_or_test(&t.attrs) => {
                self.add(module, format!("trait {}{}", t.ident, text(&t.generics)));
                for ti in &t.items {
                    let line = match ti {
                        TraitItem::Fn(f) if !hidden_or_test(&f.attrs) => text(&f.sig),
                        TraitItem::Type(ty) => format!("type {}", ty.ident),
                        TraitItem::Const(c) => format!("const {}: {}", c.ident, text(&c.ty)),
                        _ => continue,
                    };
                    self.add(&format!("{module}::{}", t.ident), line);
                }
            }
            Item::Const(c) if is_pub(&c.vis) && !hidden_or_test(&c.attrs) => {
                self.add(module, format!("const {}: {}", c.ident, text(&c.ty)));
            }
            Item::Static(s) if is_pub(&s.vis) && !hidden_or_test(&s.attrs) => {
                self.add(module, format!("static {}: {}", s.ident, text(&s.ty)));
            }
            Item::Type(t) if is_pub(&t.vis) && !hidden_or_test(&t.attrs) => {
                self.add(
                    module,
                    format!("type {}{} = {}", t.ident, text(&t.generics), text(&t.ty)),
                );
            }
            Item::Use(u) if is_pub(&u.vis) && !hidden_or_test(&u.attrs) => {
                self.add(module, format!("use {}", text(&u.tree)));
            }
            Item::Macro(m) if m.ident.is_some() && !hidden_or_test(&m.attrs) => {
                let exported = m.attrs.iter().any(|a| a.path().is_ident("macro_export"));
                if exported {
                    self.add(
                        module,
                        format!("macro {}", m.ident.as_ref().expect("named")),
                    );
                }
            }
            Item::Impl(i) if i.trait_.is_none() && !hidden_or_test(&i.attrs) => {
                let ty = text(&i.self_ty);
                for ii in &i.items {
                    let line = match ii {
                        ImplItem::Fn(f) if is_pub(&f.vis) && !hidden_or_test(&f.attrs) => {
                            text(&f.sig)
                        }
                        ImplItem::Const(c) if is_pub(&c.vis) && !hidden_or_test(&c.attrs) => {
                            format!("const {}: {}", c.ident, text(&c.ty))
                        }
                        _ => continue,
                    };
                    self.add(&format!("{module}::{ty}"), line);
                }
            }
            _ => {}
        }
    }
}

/// The file of `mod name;` declared in `parent` (`#[path]`, `name.rs` or `name/mod.rs`).
fn module_file(parent: &Path, name: &str, attrs: &[Attribute]) -> PathBuf {
    let dir = match parent.file_name().and_then(|f| f.to_str()) {
        Some("lib.rs" | "mod.rs" | "main.rs") => {
            parent.parent().expect("a directory").to_path_buf()
        }
        _ => parent.with_extension(""),
    };
    for a in attrs {
        if a.path().is_ident("path")
            && let syn::Meta::NameValue(nv) = &a.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            return dir.join(s.value());
        }
    }
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        flat
    } else {
        dir.join(name).join("mod.rs")
    }
}

fn listing(package: &str, krate: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(package);
    let mut l = Lister {
        out: BTreeSet::new(),
        private: false,
    };
    l.file(&root.join("src/lib.rs"), krate);
    let mut s = l.out.into_iter().collect::<Vec<_>>().join("\n");
    s.push('\n');
    s
}

#[test]
fn the_public_surface_is_the_one_checked_in() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("api");
    let bless = std::env::var_os("MCP_API_BLESS").is_some();
    let mut changed = Vec::new();
    for (package, krate) in CRATES {
        let now = listing(package, krate);
        let file = dir.join(format!("{package}.txt"));
        if bless {
            std::fs::create_dir_all(&dir).expect("tests/api");
            std::fs::write(&file, &now).expect("write the listing");
            continue;
        }
        let before = std::fs::read_to_string(&file).unwrap_or_default();
        if before != now {
            let added: Vec<&str> = now
                .lines()
                .filter(|l| !before.lines().any(|b| b == *l))
                .collect();
            let removed: Vec<&str> = before
                .lines()
                .filter(|l| !now.lines().any(|n| n == *l))
                .collect();
            changed.push(format!(
                "{package}: {} added, {} removed\n  + {}\n  - {}",
                added.len(),
                removed.len(),
                added.join("\n  + "),
                removed.join("\n  - ")
            ));
        }
    }
    assert!(
        changed.is_empty(),
        "the public surface changed (review it, then MCP_API_BLESS=1 to record it):\n{}",
        changed.join("\n")
    );
}

#[test]
fn the_lister_sees_what_is_public_and_nothing_hidden() {
    let file: syn::File = syn::parse_quote! {
        pub mod open {
            pub fn f(x: u8) -> u8 { x }
            fn private() {}
            #[doc(hidden)]
            pub fn hidden() {}
            pub struct S { pub a: u8, b: u8 }
            impl S { pub fn new() -> S { todo!() } fn inner(&self) {} }
        }
        mod closed { pub fn g() {} impl super::open::S { pub fn more(&self) {} } }
        #[doc(hidden)]
        pub mod __private { pub fn h() {} }
        pub use closed::g;
    };
    let mut l = Lister {
        out: BTreeSet::new(),
        private: false,
    };
    l.items(&file.items, Path::new("lib.rs"), "k");
    let got: Vec<String> = l.out.into_iter().collect();
    assert_eq!(
        got,
        [
            "k: mod open",
            "k: use closed :: g",
            "k::closed::super :: open :: S: fn more (& self)",
            "k::open: fn f (x : u8) -> u8",
            "k::open: struct S { a: u8 }",
            "k::open::S: fn new () -> S",
        ]
    );
}
