//! The Skills extension with skills given in memory ([`Skill`]) and generated ones
//! ([`DynamicSkill`]): what `build()` refuses, the manifests, the files served once when a
//! nested skill shares them, and a server without skills. Skills read from a directory are
//! tested in `mcp-tool-skills`.

use mcp_tool_runtime::Principal;
use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::protocol::{Implementation, JsonObject, ResourceContents};
use mcp_tool_runtime::resource::skills::{DynamicSkill, Skill, digest};
use mcp_tool_runtime::resource::{Resource, ResourceInfo};
use mcp_tool_runtime::server::{Server, ServerBuilder};
use mcp_tool_runtime::{
    RegistrationError, ToolError,
    manual::{BoxFuture, Step},
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

fn builder() -> ServerBuilder {
    Server::builder(Implementation::new("skills-test", "1"))
}

async fn rpc(s: &Server, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    s.handle(msg, &Principal::anonymous())
        .await
        .expect("a response")
        .to_value()
}

fn frontmatter(name: &str, description: &str) -> JsonObject {
    let Value::Object(fm) = json!({"name": name, "description": description}) else {
        unreachable!()
    };
    fm
}

fn md(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill\n---\n# {name}\n")
}

/// `docs` with a nested skill `docs/api`, each with its `SKILL.md`; the parent's manifest
/// lists the nested skill's files too.
fn nested() -> (Skill, Skill) {
    let parent = Skill::new("docs", frontmatter("docs", "The docs skill"))
        .file("SKILL.md", md("docs").into_bytes())
        .file("api/SKILL.md", md("api").into_bytes())
        .file("api/ref.json", b"{}".to_vec())
        .file("logo.bin", vec![0u8, 159, 146, 150]);
    let child = Skill::new("docs/api", frontmatter("api", "The api skill"))
        .file("SKILL.md", md("api").into_bytes())
        .file_with_type("ref.json", "application/json", b"{}".to_vec());
    (parent, child)
}

#[tokio::test]
async fn skills_in_memory_are_served_with_their_manifests() {
    let (parent, child) = nested();
    let s = builder().skill(parent).skill(child).build().unwrap();
    let list = rpc(&s, "skills/list", json!({})).await;
    let skills = list["result"]["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 2);
    assert_eq!(skills[0]["uri"], "skill://docs/SKILL.md");
    assert_eq!(
        skills[0]["frontmatter"],
        json!({"name": "docs", "description": "The docs skill"})
    );
    let manifest: Vec<(&str, &str, u64)> = skills[0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let (uri, d, size) = (&e["uri"], &e["digest"], &e["size"]);
            (
                uri.as_str().unwrap(),
                d.as_str().unwrap(),
                size.as_u64().unwrap(),
            )
        })
        .collect();
    let api_md = md("api");
    let d_api = digest(api_md.as_bytes());
    let d_json = digest(b"{}");
    let d_bin = digest(&[0, 159, 146, 150]);
    assert_eq!(
        manifest[1..],
        [
            (
                "skill://docs/api/SKILL.md",
                d_api.as_str(),
                api_md.len() as u64
            ),
            ("skill://docs/api/ref.json", d_json.as_str(), 2),
            ("skill://docs/logo.bin", d_bin.as_str(), 4),
        ]
    );
    assert_eq!(skills[1]["resources"].as_array().unwrap().len(), 2);

    // Each file served once; each SKILL.md named and described by its own skill.
    let res = rpc(&s, "resources/list", json!({})).await;
    let res = res["result"]["resources"].as_array().unwrap();
    let uris: Vec<&str> = res.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "skill://docs/SKILL.md",
            "skill://docs/api/SKILL.md",
            "skill://docs/api/ref.json",
            "skill://docs/logo.bin"
        ]
    );
    let by_uri = |u: &str| res.iter().find(|r| r["uri"] == u).unwrap();
    assert_eq!(by_uri("skill://docs/api/SKILL.md")["name"], "api");
    assert_eq!(
        by_uri("skill://docs/api/SKILL.md")["description"],
        "The api skill"
    );
    assert_eq!(by_uri("skill://docs/SKILL.md")["mimeType"], "text/markdown");
    assert_eq!(by_uri("skill://docs/api/ref.json")["name"], "ref.json");
    assert_eq!(
        by_uri("skill://docs/api/ref.json")["mimeType"],
        "text/plain"
    );
    assert_eq!(
        by_uri("skill://docs/logo.bin")["mimeType"],
        "application/octet-stream"
    );
    // Binary bytes are read back as a blob, text as text.
    let read = rpc(
        &s,
        "resources/read",
        json!({"uri": "skill://docs/logo.bin"}),
    )
    .await;
    assert_eq!(read["result"]["contents"][0]["blob"], "AJ+Slg==");
    let read = rpc(
        &s,
        "resources/read",
        json!({"uri": "skill://docs/api/SKILL.md"}),
    )
    .await;
    assert_eq!(read["result"]["contents"][0]["text"], api_md.as_str());
    let dir = rpc(
        &s,
        "resources/directory/read",
        json!({"uri": "skill://docs"}),
    )
    .await;
    let children: Vec<&str> = dir["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        children,
        [
            "skill://docs/SKILL.md",
            "skill://docs/api",
            "skill://docs/logo.bin"
        ]
    );
}

fn refused(b: ServerBuilder) -> String {
    match b.build() {
        Ok(_) => panic!("accepted"),
        Err(e @ RegistrationError::Skill { .. }) => e.to_string(),
        Err(e) => panic!("not a skill error: {e}"),
    }
}

#[test]
fn skills_in_memory_that_break_a_rule_are_refused_at_build() {
    let ok = || Skill::new("a", frontmatter("a", "d")).file("SKILL.md", md("a").into_bytes());
    assert!(builder().skill(ok()).build().is_ok());
    let big = vec![0u8; 16 * 1024 * 1024];
    let many = (0..512).fold(ok(), |s, i| s.file(format!("f{i}.txt"), b"x".to_vec()));
    let cases: Vec<(&str, Skill, &str)> = vec![
        (
            "bad path",
            Skill::new("a/../b", frontmatter("b", "d")),
            "unreserved",
        ),
        (
            "empty segment",
            Skill::new("x//a", frontmatter("a", "d")),
            "unreserved",
        ),
        (
            "name mismatch",
            Skill::new("a", frontmatter("b", "d")),
            "must match",
        ),
        (
            "bad name",
            Skill::new("A", frontmatter("A", "d")),
            "naming rules",
        ),
        (
            "no description",
            Skill::new("a", frontmatter("a", " ")),
            "`description`",
        ),
        (
            "no SKILL.md",
            Skill::new("a", frontmatter("a", "d")).file("x.md", b"x".to_vec()),
            "no SKILL.md",
        ),
        (
            "odd file name",
            ok().file("my notes.md", b"x".to_vec()),
            "URI segment",
        ),
        (
            "climbing file",
            ok().file("../b/SKILL.md", b"x".to_vec()),
            "URI segment",
        ),
        (
            "absolute file",
            ok().file("/etc/passwd", b"x".to_vec()),
            "URI segment",
        ),
        ("twice", ok().file("SKILL.md", b"x".to_vec()), "twice"),
        ("too many files", many, "512"),
        ("too many bytes", ok().file("big.bin", big), "16777216"),
    ];
    for (what, skill, message) in cases {
        let e = refused(builder().skill(skill));
        assert!(e.contains(message), "{what}: {e}");
    }
    // Two skills that disagree on a file they share, and two at one URI.
    let (parent, _) = nested();
    let liar = Skill::new("docs/api", frontmatter("api", "The api skill"))
        .file("SKILL.md", b"---\nname: api\n---\nother\n".to_vec());
    assert!(refused(builder().skill(parent).skill(liar)).contains("different bytes"));
    let e = refused(builder().skill(ok()).skill(ok()));
    assert!(e.contains("share"), "{e}");
    // An error recorded on the builder is what build() returns.
    let e = builder()
        .refuse(RegistrationError::Skill {
            path: "x".into(),
            message: "m".into(),
        })
        .build()
        .unwrap_err();
    assert_eq!(e.to_string(), "skill `x`: m");
}

/// A generated SKILL.md.
struct Generated;

impl Resource for Generated {
    fn info(&self) -> ResourceInfo {
        let mut info = ResourceInfo::uri("skill://reports/daily/SKILL.md", "daily");
        info.mime_type = Some("text/markdown".into());
        info
    }

    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        uri: String,
        _vars: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step<Vec<ResourceContents>>, ToolError>> {
        let text = "---\nname: daily\ndescription: Today's report\n---\nGenerated.\n";
        Box::pin(async move {
            Ok(Step::Complete(vec![ResourceContents::text(
                uri,
                Some("text/markdown".into()),
                text,
            )]))
        })
    }
}

#[tokio::test]
async fn dynamic_skills_are_listed_as_dynamic() {
    let skill = DynamicSkill::new("reports/daily", "Today's report").field("license", json!("MIT"));
    // Without a resource for its SKILL.md, build() refuses it.
    let e = builder().dynamic_skill(skill.clone()).build().unwrap_err();
    assert!(
        e.to_string().contains("skill://reports/daily/SKILL.md"),
        "{e}"
    );
    // A bad path or name is refused too.
    assert!(
        builder()
            .resource(Generated)
            .dynamic_skill(DynamicSkill::new("reports/Daily", "d"))
            .build()
            .is_err()
    );
    assert!(
        builder()
            .resource(Generated)
            .dynamic_skill(DynamicSkill::new("../daily", "d"))
            .build()
            .is_err()
    );
    assert!(
        builder()
            .resource(Generated)
            .dynamic_skill(DynamicSkill::new("reports/daily", " "))
            .build()
            .is_err()
    );

    let s = builder()
        .resource(Generated)
        .dynamic_skill(skill)
        .build()
        .unwrap();
    let list = rpc(&s, "skills/list", json!({})).await;
    assert_eq!(
        list["result"]["skills"],
        json!([{"uri": "skill://reports/daily/SKILL.md",
                "frontmatter": {"name": "daily", "description": "Today's report", "license": "MIT"},
                "resources": "dynamic"}])
    );
    let read = rpc(
        &s,
        "resources/read",
        json!({"uri": "skill://reports/daily/SKILL.md"}),
    )
    .await;
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("name: daily")
    );
    let dir = rpc(
        &s,
        "resources/directory/read",
        json!({"uri": "skill://reports/daily"}),
    )
    .await;
    assert_eq!(
        dir["result"]["resources"][0]["uri"],
        "skill://reports/daily/SKILL.md"
    );
    // Two skills at one URI are refused.
    let e = builder()
        .resource(Generated)
        .dynamic_skill(DynamicSkill::new("reports/daily", "a"))
        .dynamic_skill(DynamicSkill::new("reports/daily", "b"))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("share"), "{e}");
}

#[tokio::test]
async fn without_skills_the_methods_are_unknown() {
    let s = builder().build().unwrap();
    for m in ["skills/list", "skills/get", "resources/directory/read"] {
        let r = rpc(&s, m, json!({"uri": "skill://a/SKILL.md"})).await;
        assert_eq!(r["error"]["code"], -32601, "{m}");
    }
    let d = rpc(&s, "server/discover", json!({})).await;
    assert!(d["result"]["capabilities"]["extensions"].is_null());
}
