/// Asks to confirm `what`.
///
/// An `#[mcp_flow]`: `.await` the call inside a tool or flow (it may suspend), or in
/// direct mode.
#[allow(non_camel_case_types)]
struct confirm<'__mcp_a>(
    &'__mcp_a mut ::mcp_tool_runtime::__private::v0_1_0::ToolContext,
    String,
);
impl<'__mcp_a> confirm<'__mcp_a> {
    /// Names this call's site: the prefix of the flow's request keys (`site/key`).
    #[allow(dead_code)]
    pub fn key(
        self,
        site: impl ::core::convert::Into<::std::string::String>,
    ) -> ::mcp_tool_runtime::__private::v0_1_0::Keyed<Self> {
        ::mcp_tool_runtime::__private::v0_1_0::Keyed::new(self, site)
    }
    /// The function as written (direct mode).
    #[allow(clippy::all)]
    async fn __mcp_direct(
        cx: &mut ToolContext,
        what: String,
    ) -> Result<bool, ToolError> {
        let answer: YesNo = cx
            .ask(format!("{what}?"))
            .__mcp_default_key("answer")
            .await?;
        Ok(answer.ok)
    }
    #[allow(
        unused_mut,
        unused_variables,
        unused_assignments,
        unused_labels,
        unreachable_code,
        non_camel_case_types,
        clippy::all
    )]
    async fn __mcp_run(
        cx: &mut ::mcp_tool_runtime::__private::v0_1_0::ToolContext,
        __mcp_params: ::core::option::Option<(String,)>,
        __mcp_state: ::core::option::Option<::mcp_tool_runtime::__private::v0_1_0::Value>,
    ) -> ::core::result::Result<
        ::mcp_tool_runtime::__private::v0_1_0::FlowStep<Result<bool, ToolError>>,
        <Result<
            bool,
            ToolError,
        > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
    > {
        #[allow(unused_imports)]
        use ::mcp_tool_runtime::__private::v0_1_0::autoref::{
            IsFlow as _, IsKept as _, IsSoft as _, NotFlow as _, NotKept as _,
            NotSoft as _,
        };
        #[allow(dead_code)]
        enum __mcp_State<__mcp_T0, __mcp_T1> {
            Start { what: __mcp_T0 },
            S0 { __mcp_m0: __mcp_T1 },
        }
        fn __mcp_finish(
            r: Result<bool, ToolError>,
        ) -> ::core::result::Result<
            ::mcp_tool_runtime::__private::v0_1_0::FlowStep<Result<bool, ToolError>>,
            <Result<
                bool,
                ToolError,
            > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
        > {
            ::core::result::Result::Ok(
                ::mcp_tool_runtime::__private::v0_1_0::FlowStep::Done(r),
            )
        }
        let mut __mcp_st = match (__mcp_params, __mcp_state) {
            (::core::option::Option::Some((what,)), _) => __mcp_State::Start { what },
            (::core::option::Option::None, __mcp_state) => {
                match __mcp_state {
                    ::core::option::Option::None => {
                        return ::core::result::Result::Err(
                            ::mcp_tool_runtime::__private::v0_1_0::abort::<
                                <Result<
                                    bool,
                                    ToolError,
                                > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                            >(cx, ::mcp_tool_runtime::__private::v0_1_0::invalid_state()),
                        );
                    }
                    ::core::option::Option::Some(__mcp_saved) => {
                        let (__mcp_stage, mut __mcp_vars) = ::mcp_tool_runtime::__private::v0_1_0::ok::<
                            _,
                            <Result<
                                bool,
                                ToolError,
                            > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                        >(
                            ::mcp_tool_runtime::__private::v0_1_0::open_state(
                                __mcp_saved,
                            ),
                            cx,
                        )?;
                        match __mcp_stage.as_str() {
                            "S0" => {
                                __mcp_State::S0 {
                                    __mcp_m0: ::mcp_tool_runtime::__private::v0_1_0::ok::<
                                        _,
                                        <Result<
                                            bool,
                                            ToolError,
                                        > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                                    >(__mcp_vars.marker("__mcp_m0", "answer"), cx)?,
                                }
                            }
                            _ => {
                                return ::core::result::Result::Err(
                                    ::mcp_tool_runtime::__private::v0_1_0::abort::<
                                        <Result<
                                            bool,
                                            ToolError,
                                        > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                                    >(
                                        cx,
                                        ::mcp_tool_runtime::__private::v0_1_0::invalid_state(),
                                    ),
                                );
                            }
                        }
                    }
                }
            }
        };
        '__mcp_dispatch: loop {
            match __mcp_st {
                __mcp_State::Start { what } => {
                    let __mcp_m0 = ::mcp_tool_runtime::__private::v0_1_0::ok::<
                        _,
                        <Result<
                            bool,
                            ToolError,
                        > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                    >(
                        ::mcp_tool_runtime::__private::v0_1_0::request_key(
                            cx,
                            "answer",
                            false,
                            false,
                            ::mcp_tool_runtime::__private::v0_1_0::Ask::<
                                YesNo,
                            >::new(format!("{what}?")),
                        ),
                        cx,
                    )?;
                    if cx.round_ready() {
                        __mcp_st = __mcp_State::S0 { __mcp_m0 };
                        continue '__mcp_dispatch;
                    }
                    return ::mcp_tool_runtime::__private::v0_1_0::suspend_keys(
                        "S0",
                        [],
                        [("__mcp_m0", __mcp_m0.saved("answer"))],
                    );
                }
                __mcp_State::S0 { __mcp_m0 } => {
                    let answer: YesNo = ::mcp_tool_runtime::__private::v0_1_0::answer_for(
                        cx,
                        __mcp_m0,
                    )?;
                    return __mcp_finish(Ok(answer.ok));
                }
            }
        }
    }
    /// What the flow takes from the flows it calls.
    #[allow(unreachable_code, clippy::all)]
    fn __mcp_flows() -> ::std::vec::Vec<
        ::mcp_tool_runtime::__private::v0_1_0::FlowInfo,
    > {
        #[allow(unused_imports)]
        use ::mcp_tool_runtime::__private::v0_1_0::autoref::{IsFlow as _, NotFlow as _};
        ::std::vec![]
    }
}
impl<'__mcp_a> ::core::future::IntoFuture for confirm<'__mcp_a> {
    type Output = Result<bool, ToolError>;
    type IntoFuture = ::mcp_tool_runtime::__private::v0_1_0::BoxFuture<
        '__mcp_a,
        Result<bool, ToolError>,
    >;
    fn into_future(self) -> Self::IntoFuture {
        let confirm(__mcp_cx, __mcp_p0) = self;
        ::std::boxed::Box::pin(async move {
            let __mcp_mark = ::mcp_tool_runtime::__private::v0_1_0::flow_enter(
                __mcp_cx,
                "confirm",
            );
            let __mcp_r = Self::__mcp_direct(&mut *__mcp_cx, __mcp_p0).await;
            ::mcp_tool_runtime::__private::v0_1_0::flow_leave(__mcp_cx, __mcp_mark);
            __mcp_r
        })
    }
}
impl<'__mcp_a> ::mcp_tool_runtime::__private::v0_1_0::Flow for confirm<'__mcp_a> {
    type Output = Result<bool, ToolError>;
    const NAME: &'static str = "confirm";
    fn context(&mut self) -> &mut ::mcp_tool_runtime::__private::v0_1_0::ToolContext {
        &mut *self.0
    }
    fn info() -> ::mcp_tool_runtime::__private::v0_1_0::FlowInfo {
        let __mcp_flows = Self::__mcp_flows();
        ::mcp_tool_runtime::__private::v0_1_0::FlowInfo {
            name: "confirm",
            capabilities: ::mcp_tool_runtime::__private::v0_1_0::flow_capabilities(
                ::mcp_tool_runtime::__private::v0_1_0::RequiredCapabilities {
                    elicitation: true,
                    sampling: false,
                    roots: false,
                },
                &__mcp_flows,
            ),
            state: ::mcp_tool_runtime::__private::v0_1_0::state_keys(
                ::std::vec![],
                &__mcp_flows,
            ),
            layout: ::mcp_tool_runtime::__private::v0_1_0::layout_with(
                "loPxjN4hJaA",
                &__mcp_flows,
            ),
            rounds: ::mcp_tool_runtime::__private::v0_1_0::flow_rounds(
                1u32,
                &__mcp_flows,
            ),
            loops: ::mcp_tool_runtime::__private::v0_1_0::flow_loops(
                false,
                &__mcp_flows,
            ),
            validation: ::mcp_tool_runtime::__private::v0_1_0::validate_with(
                (|| -> ::core::result::Result<
                    (),
                    ::mcp_tool_runtime::__private::v0_1_0::RegistrationError,
                > {
                    ::mcp_tool_runtime::__private::v0_1_0::check_elicitation::<
                        YesNo,
                    >("answer")?;
                    ::core::result::Result::Ok(())
                })(),
                &__mcp_flows,
            ),
        }
    }
    fn start<'s>(
        self,
    ) -> ::mcp_tool_runtime::__private::v0_1_0::BoxFuture<
        's,
        ::mcp_tool_runtime::__private::v0_1_0::FlowStep<Result<bool, ToolError>>,
    >
    where
        Self: 's,
    {
        let confirm(__mcp_cx, __mcp_p0) = self;
        ::std::boxed::Box::pin(async move {
            let __mcp_mark = ::mcp_tool_runtime::__private::v0_1_0::flow_enter(
                __mcp_cx,
                "confirm",
            );
            let __mcp_out = Self::__mcp_run(
                    &mut *__mcp_cx,
                    ::core::option::Option::Some((__mcp_p0,)),
                    ::core::option::Option::None,
                )
                .await;
            ::mcp_tool_runtime::__private::v0_1_0::flow_leave(__mcp_cx, __mcp_mark);
            ::mcp_tool_runtime::__private::v0_1_0::flow_outcome(__mcp_out)
        })
    }
    fn resume(
        cx: &mut ::mcp_tool_runtime::__private::v0_1_0::ToolContext,
        state: ::mcp_tool_runtime::__private::v0_1_0::Value,
    ) -> ::mcp_tool_runtime::__private::v0_1_0::BoxFuture<
        '_,
        ::mcp_tool_runtime::__private::v0_1_0::FlowStep<Result<bool, ToolError>>,
    > {
        ::std::boxed::Box::pin(async move {
            let __mcp_mark = ::mcp_tool_runtime::__private::v0_1_0::flow_enter(
                cx,
                "confirm",
            );
            let __mcp_out = Self::__mcp_run(
                    &mut *cx,
                    ::core::option::Option::None,
                    ::core::option::Option::Some(state),
                )
                .await;
            ::mcp_tool_runtime::__private::v0_1_0::flow_leave(cx, __mcp_mark);
            ::mcp_tool_runtime::__private::v0_1_0::flow_outcome(__mcp_out)
        })
    }
}
#[allow(dead_code)]
/// Deletes after a confirmation.
async fn delete(
    cx: &mut ToolContext,
    args: Items,
    store: State<Store>,
) -> Result<String, ToolError> {
    let sure = confirm(
            ::mcp_tool_runtime::__private::v0_1_0::site(cx, "sure"),
            format!("Delete {}", args.name),
        )
        .await?;
    if sure {
        store.delete(&args.name);
    }
    Ok(format!("{sure}"))
}
///The `delete` MCP tool generated by `#[mcp_tool]` from `fn delete`: register it with `delete::tool()`.
#[allow(non_camel_case_types)]
struct delete {}
impl delete {
    /// The tool, ready for `Server::builder(..).tool(..)`.
    fn tool() -> Self {
        delete {}
    }
    /// What the tool takes from the flows it calls.
    #[allow(unreachable_code, clippy::all)]
    fn __mcp_flows() -> ::std::vec::Vec<
        ::mcp_tool_runtime::__private::v0_1_0::FlowInfo,
    > {
        #[allow(unused_imports)]
        use ::mcp_tool_runtime::__private::v0_1_0::autoref::{IsFlow as _, NotFlow as _};
        ::std::vec![
            (&& ::mcp_tool_runtime::__private::v0_1_0::autoref::wrap_witness(& if false {
            ::core::option::Option::Some(confirm(loop {}, loop {})) } else {
            ::core::option::Option::None })).ops().info()
        ]
    }
    /// The completed value of the function's result.
    #[allow(clippy::all)]
    fn __mcp_done(
        __mcp_r: Result<String, ToolError>,
        __mcp_uri: &str,
    ) -> ::core::result::Result<
        ::mcp_tool_runtime::__private::v0_1_0::CallToolResult,
        ::mcp_tool_runtime::__private::v0_1_0::ToolError,
    > {
        let _ = __mcp_uri;
        #[allow(unused_imports)]
        use ::mcp_tool_runtime::__private::v0_1_0::autoref::{
            AnyhowError as _, OtherError as _, OwnError as _, RawOutput as _,
            StructuredOutput as _, TextOutput as _,
        };
        match ::mcp_tool_runtime::__private::v0_1_0::ToolReturn::into_result(__mcp_r) {
            ::core::result::Result::Ok(__mcp_v) => {
                (&&::mcp_tool_runtime::__private::v0_1_0::autoref::OutputOf::<
                    <Result<
                        String,
                        ToolError,
                    > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Ok,
                >::new())
                    .finish(__mcp_v)
            }
            ::core::result::Result::Err(__mcp_e) => {
                ::core::result::Result::Err(
                    (&&::mcp_tool_runtime::__private::v0_1_0::autoref::ErrorOf::<
                        <Result<
                            String,
                            ToolError,
                        > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                    >::new())
                        .tool_error(__mcp_e),
                )
            }
        }
    }
    #[allow(unused_mut, unused_variables, clippy::all)]
    async fn __mcp_direct(
        cx: &mut ::mcp_tool_runtime::__private::v0_1_0::ToolContext,
        mut __mcp_args: ::mcp_tool_runtime::__private::v0_1_0::Value,
        __mcp_uri: ::std::string::String,
    ) -> ::core::result::Result<
        ::mcp_tool_runtime::__private::v0_1_0::CallToolResult,
        ::mcp_tool_runtime::__private::v0_1_0::ToolError,
    > {
        let __mcp_p0: Items = ::mcp_tool_runtime::__private::v0_1_0::parse_args::<
            Items,
        >(::core::mem::take(&mut __mcp_args))?;
        let __mcp_p1: State<Store> = <State<
            Store,
        > as ::mcp_tool_runtime::__private::v0_1_0::FromContext>::from_context(cx)?;
        let __mcp_r = delete(&mut *cx, __mcp_p0, __mcp_p1).await;
        if let ::core::option::Option::Some(__mcp_e) = ::mcp_tool_runtime::__private::v0_1_0::take_abort(
            cx,
        ) {
            return ::core::result::Result::Err(__mcp_e);
        }
        Self::__mcp_done(__mcp_r, &__mcp_uri)
    }
}
impl ::mcp_tool_runtime::__private::v0_1_0::Tool for delete {
    fn info(&self) -> ::mcp_tool_runtime::__private::v0_1_0::ToolInfo {
        let __mcp_flows = Self::__mcp_flows();
        let __mcp_rounds = ::mcp_tool_runtime::__private::v0_1_0::Rounds {
            capabilities: ::mcp_tool_runtime::__private::v0_1_0::flow_capabilities(
                ::mcp_tool_runtime::__private::v0_1_0::RequiredCapabilities {
                    elicitation: false,
                    sampling: false,
                    roots: false,
                },
                &__mcp_flows,
            ),
            max_rounds: ::mcp_tool_runtime::__private::v0_1_0::default_max_rounds(
                0u32,
                false,
                &__mcp_flows,
            ),
            state_ttl: ::core::option::Option::None,
            layout: ::mcp_tool_runtime::__private::v0_1_0::layout_with(
                "bcupcKlGybU",
                &__mcp_flows,
            ),
            journal: false,
            early_answers: false,
            once: false,
        };
        ::mcp_tool_runtime::__private::v0_1_0::ToolInfo {
            name: ::std::string::String::from("delete"),
            title: ::core::option::Option::None,
            description: ::core::option::Option::Some(
                ::std::string::String::from("Deletes after a confirmation."),
            ),
            input_schema: ::mcp_tool_runtime::__private::v0_1_0::input_schema::<Items>(),
            output_schema: {
                #[allow(unused_imports)]
                use ::mcp_tool_runtime::__private::v0_1_0::autoref::{
                    TextOutput as _, RawOutput as _, StructuredOutput as _,
                };
                (&&::mcp_tool_runtime::__private::v0_1_0::autoref::OutputOf::<
                    <Result<
                        String,
                        ToolError,
                    > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Ok,
                >::new())
                    .schema()
            },
            annotations: ::mcp_tool_runtime::__private::v0_1_0::annotations(
                ::core::option::Option::None,
                ::core::option::Option::None,
                ::core::option::Option::None,
                ::core::option::Option::None,
                ::core::option::Option::None,
            ),
            capabilities: __mcp_rounds.capabilities,
            max_rounds: __mcp_rounds.max_rounds,
            state_ttl: __mcp_rounds.state_ttl,
            layout: __mcp_rounds.layout,
            journal: __mcp_rounds.journal,
            early_answers: __mcp_rounds.early_answers,
            once: __mcp_rounds.once,
            task: ::mcp_tool_runtime::__private::v0_1_0::TaskSupport::Forbidden,
            task_start: ::mcp_tool_runtime::__private::v0_1_0::TaskStart::Call,
            scopes: ::std::vec![],
        }
    }
    fn validate(
        &self,
    ) -> ::core::result::Result<
        (),
        ::mcp_tool_runtime::__private::v0_1_0::RegistrationError,
    > {
        ::mcp_tool_runtime::__private::v0_1_0::validate_with(
            (|| -> ::core::result::Result<
                (),
                ::mcp_tool_runtime::__private::v0_1_0::RegistrationError,
            > { ::core::result::Result::Ok(()) })(),
            &Self::__mcp_flows(),
        )
    }
    fn required_state(
        &self,
    ) -> ::std::vec::Vec<::mcp_tool_runtime::__private::v0_1_0::StateKey> {
        ::mcp_tool_runtime::__private::v0_1_0::state_keys(
            ::std::vec![
                < State < Store > as ::mcp_tool_runtime::__private::v0_1_0::FromContext >
                ::keys()
            ],
            &Self::__mcp_flows(),
        )
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ::mcp_tool_runtime::__private::v0_1_0::ToolContext,
        args: ::mcp_tool_runtime::__private::v0_1_0::Value,
        state: ::core::option::Option<::mcp_tool_runtime::__private::v0_1_0::Value>,
    ) -> ::mcp_tool_runtime::__private::v0_1_0::BoxFuture<
        'a,
        ::core::result::Result<
            ::mcp_tool_runtime::__private::v0_1_0::Step,
            ::mcp_tool_runtime::__private::v0_1_0::ToolError,
        >,
    > {
        #[allow(
            unused_mut,
            unused_variables,
            unused_assignments,
            unused_labels,
            unreachable_code,
            non_camel_case_types,
            clippy::all
        )]
        async fn __mcp_run(
            cx: &mut ::mcp_tool_runtime::__private::v0_1_0::ToolContext,
            __mcp_args: ::mcp_tool_runtime::__private::v0_1_0::Value,
            __mcp_state: ::core::option::Option<
                ::mcp_tool_runtime::__private::v0_1_0::Value,
            >,
        ) -> ::core::result::Result<
            ::mcp_tool_runtime::__private::v0_1_0::FlowStep<Result<String, ToolError>>,
            <Result<
                String,
                ToolError,
            > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
        > {
            #[allow(unused_imports)]
            use ::mcp_tool_runtime::__private::v0_1_0::autoref::{
                IsFlow as _, IsKept as _, IsSoft as _, NotFlow as _, NotKept as _,
                NotSoft as _,
            };
            #[allow(dead_code)]
            enum __mcp_State<__mcp_T0> {
                Start,
                S0 { __mcp_m0: __mcp_T0 },
            }
            fn __mcp_finish(
                r: Result<String, ToolError>,
            ) -> ::core::result::Result<
                ::mcp_tool_runtime::__private::v0_1_0::FlowStep<
                    Result<String, ToolError>,
                >,
                <Result<
                    String,
                    ToolError,
                > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
            > {
                ::core::result::Result::Ok(
                    ::mcp_tool_runtime::__private::v0_1_0::FlowStep::Done(r),
                )
            }
            let mut __mcp_parsed = ::core::option::Option::Some(
                ::mcp_tool_runtime::__private::v0_1_0::ok::<
                    _,
                    <Result<
                        String,
                        ToolError,
                    > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                >(
                    ::mcp_tool_runtime::__private::v0_1_0::parse_args::<
                        Items,
                    >(__mcp_args.clone()),
                    cx,
                )?,
            );
            let mut __mcp_st = match __mcp_state {
                ::core::option::Option::None => __mcp_State::Start,
                ::core::option::Option::Some(__mcp_saved) => {
                    let (__mcp_stage, mut __mcp_vars) = ::mcp_tool_runtime::__private::v0_1_0::ok::<
                        _,
                        <Result<
                            String,
                            ToolError,
                        > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                    >(
                        ::mcp_tool_runtime::__private::v0_1_0::open_state(__mcp_saved),
                        cx,
                    )?;
                    match __mcp_stage.as_str() {
                        "S0" => {
                            __mcp_State::S0 {
                                __mcp_m0: ::mcp_tool_runtime::__private::v0_1_0::ok::<
                                    _,
                                    <Result<
                                        String,
                                        ToolError,
                                    > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                                >(__mcp_vars.flow("__mcp_m0", "sure"), cx)?,
                            }
                        }
                        _ => {
                            return ::core::result::Result::Err(
                                ::mcp_tool_runtime::__private::v0_1_0::abort::<
                                    <Result<
                                        String,
                                        ToolError,
                                    > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                                >(
                                    cx,
                                    ::mcp_tool_runtime::__private::v0_1_0::invalid_state(),
                                ),
                            );
                        }
                    }
                }
            };
            '__mcp_dispatch: loop {
                match __mcp_st {
                    __mcp_State::Start => {
                        let args: Items = ::mcp_tool_runtime::__private::v0_1_0::ok::<
                            _,
                            <Result<
                                String,
                                ToolError,
                            > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                        >(
                            ::mcp_tool_runtime::__private::v0_1_0::stage_args(
                                &mut __mcp_parsed,
                                &__mcp_args,
                            ),
                            cx,
                        )?;
                        let __mcp_site0: ::std::string::String = ::std::string::String::from(
                            "sure",
                        );
                        let __mcp_call = confirm(cx, format!("Delete {}", args.name));
                        let __mcp_m0 = match (&&::mcp_tool_runtime::__private::v0_1_0::autoref::wrap(
                            &__mcp_call,
                        ))
                            .ops()
                            .start(::core::clone::Clone::clone(&__mcp_site0), __mcp_call)
                            .await
                        {
                            ::mcp_tool_runtime::__private::v0_1_0::FlowStep::Done(
                                __mcp_r,
                            ) => {
                                ::mcp_tool_runtime::__private::v0_1_0::FlowSlot::Done(
                                    __mcp_r,
                                )
                            }
                            ::mcp_tool_runtime::__private::v0_1_0::FlowStep::Suspended(
                                __mcp_s,
                            ) => {
                                return ::mcp_tool_runtime::__private::v0_1_0::suspend_flow(
                                    "S0",
                                    [],
                                    "__mcp_m0",
                                    __mcp_s,
                                    &__mcp_site0,
                                    "sure",
                                );
                            }
                        };
                        __mcp_st = __mcp_State::S0 { __mcp_m0 };
                        continue '__mcp_dispatch;
                    }
                    __mcp_State::S0 { __mcp_m0 } => {
                        let args: Items = ::mcp_tool_runtime::__private::v0_1_0::ok::<
                            _,
                            <Result<
                                String,
                                ToolError,
                            > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                        >(
                            ::mcp_tool_runtime::__private::v0_1_0::stage_args(
                                &mut __mcp_parsed,
                                &__mcp_args,
                            ),
                            cx,
                        )?;
                        let store: State<Store> = ::mcp_tool_runtime::__private::v0_1_0::ok::<
                            _,
                            <Result<
                                String,
                                ToolError,
                            > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                        >(
                            <State<
                                Store,
                            > as ::mcp_tool_runtime::__private::v0_1_0::FromContext>::from_context(
                                cx,
                            ),
                            cx,
                        )?;
                        let __mcp_r0 = match __mcp_m0 {
                            ::mcp_tool_runtime::__private::v0_1_0::FlowSlot::Done(
                                __mcp_r,
                            ) => __mcp_r,
                            ::mcp_tool_runtime::__private::v0_1_0::FlowSlot::Saved(
                                __mcp_site0,
                                __mcp_s,
                            ) => {
                                let __mcp_w = if false {
                                    ::core::option::Option::Some(confirm(loop {}, loop {}))
                                } else {
                                    ::core::option::Option::None
                                };
                                match (&&::mcp_tool_runtime::__private::v0_1_0::autoref::wrap_witness(
                                    &__mcp_w,
                                ))
                                    .ops()
                                    .resume(
                                        cx,
                                        ::core::clone::Clone::clone(&__mcp_site0),
                                        __mcp_s,
                                    )
                                    .await
                                {
                                    ::mcp_tool_runtime::__private::v0_1_0::FlowStep::Done(
                                        __mcp_r,
                                    ) => __mcp_r,
                                    ::mcp_tool_runtime::__private::v0_1_0::FlowStep::Suspended(
                                        __mcp_s,
                                    ) => {
                                        return ::mcp_tool_runtime::__private::v0_1_0::suspend_flow(
                                            "S0",
                                            [],
                                            "__mcp_m0",
                                            __mcp_s,
                                            &__mcp_site0,
                                            "sure",
                                        );
                                    }
                                }
                            }
                        };
                        let sure = __mcp_r0?;
                        if sure {
                            store.delete(&args.name);
                        }
                        return __mcp_finish(Ok(format!("{sure}")));
                    }
                }
            }
        }
        ::std::boxed::Box::pin(async move {
            let __mcp_out = __mcp_run(&mut *cx, args, state).await;
            if let ::core::option::Option::Some(__mcp_e) = ::mcp_tool_runtime::__private::v0_1_0::take_abort(
                cx,
            ) {
                return ::core::result::Result::Err(__mcp_e);
            }
            match __mcp_out {
                ::core::result::Result::Ok(
                    ::mcp_tool_runtime::__private::v0_1_0::FlowStep::Done(__mcp_r),
                ) => {
                    Self::__mcp_done(__mcp_r, "")
                        .map(::mcp_tool_runtime::__private::v0_1_0::Step::Complete)
                }
                ::core::result::Result::Ok(
                    ::mcp_tool_runtime::__private::v0_1_0::FlowStep::Suspended(__mcp_s),
                ) => {
                    ::core::result::Result::Ok(::mcp_tool_runtime::__private::v0_1_0::Step::Suspend {
                        state: __mcp_s,
                    })
                }
                ::core::result::Result::Err(__mcp_e) => {
                    #[allow(unused_imports)]
                    use ::mcp_tool_runtime::__private::v0_1_0::autoref::{
                        AnyhowError as _, OtherError as _, OwnError as _,
                    };
                    ::core::result::Result::Err(
                        (&&::mcp_tool_runtime::__private::v0_1_0::autoref::ErrorOf::<
                            <Result<
                                String,
                                ToolError,
                            > as ::mcp_tool_runtime::__private::v0_1_0::ToolReturn>::Error,
                        >::new())
                            .tool_error(__mcp_e),
                    )
                }
            }
        })
    }
    fn direct<'a>(
        &'a self,
        cx: &'a mut ::mcp_tool_runtime::__private::v0_1_0::ToolContext,
        args: ::mcp_tool_runtime::__private::v0_1_0::Value,
    ) -> ::core::option::Option<
        ::mcp_tool_runtime::__private::v0_1_0::BoxFuture<
            'a,
            ::core::result::Result<
                ::mcp_tool_runtime::__private::v0_1_0::CallToolResult,
                ::mcp_tool_runtime::__private::v0_1_0::ToolError,
            >,
        >,
    > {
        #[allow(unused_imports)]
        use ::mcp_tool_runtime::__private::v0_1_0::autoref::{
            LocalFuture as _, SendFuture as _,
        };
        (&::mcp_tool_runtime::__private::v0_1_0::autoref::DirectWrap::new(
            Self::__mcp_direct(cx, args, ::std::string::String::new()),
        ))
            .boxed()
    }
}
