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
}
#[allow(warnings, clippy::all)]
const _: () = {
    use ::mcp_tool_runtime::__private::v0_1_0 as __mcp;
    use __mcp::autoref::traits::*;
    type __mcp_Ret = Result<bool, ToolError>;
    type __mcp_Ok = <__mcp_Ret as __mcp::ToolReturn>::Ok;
    type __mcp_Err = <__mcp_Ret as __mcp::ToolReturn>::Error;
    impl<'__mcp_a> confirm<'__mcp_a> {
        async fn __mcp_run(
            cx: &mut __mcp::ToolContext,
            __mcp_params: __mcp::Option<(String,)>,
            __mcp_state: __mcp::Option<__mcp::Value>,
        ) -> __mcp::Result<__mcp::FlowStep<__mcp_Ret>, __mcp_Err> {
            enum __mcp_State<__mcp_T0, __mcp_T1> {
                Start { what: __mcp_T0 },
                S0 { __mcp_m0: __mcp_T1 },
            }
            fn __mcp_finish(
                r: __mcp_Ret,
            ) -> __mcp::Result<__mcp::FlowStep<__mcp_Ret>, __mcp_Err> {
                __mcp::Result::Ok(__mcp::FlowStep::Done(r))
            }
            fn __mcp_ok<__mcp_V>(
                r: __mcp::Result<__mcp_V, __mcp::ToolError>,
                cx: &mut __mcp::ToolContext,
            ) -> __mcp::Result<__mcp_V, __mcp_Err> {
                __mcp::ok(r, cx)
            }
            let mut __mcp_st = match (__mcp_params, __mcp_state) {
                (__mcp::Option::Some((what,)), _) => __mcp_State::Start { what },
                (__mcp::Option::None, __mcp_state) => {
                    match __mcp_state {
                        __mcp::Option::None => {
                            return __mcp::Result::Err(
                                __mcp::abort::<__mcp_Err>(cx, __mcp::invalid_state()),
                            );
                        }
                        __mcp::Option::Some(__mcp_saved) => {
                            let (__mcp_stage, mut __mcp_vars) = __mcp_ok(
                                __mcp::open_state(__mcp_saved),
                                cx,
                            )?;
                            match __mcp_stage.as_str() {
                                "S0" => {
                                    __mcp_State::S0 {
                                        __mcp_m0: __mcp_ok(
                                            __mcp_vars.marker("__mcp_m0", "answer"),
                                            cx,
                                        )?,
                                    }
                                }
                                _ => {
                                    return __mcp::Result::Err(
                                        __mcp::abort::<__mcp_Err>(cx, __mcp::invalid_state()),
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
                        let __mcp_m0 = __mcp_ok(
                            __mcp::request_key(
                                cx,
                                "answer",
                                false,
                                false,
                                __mcp::Ask::<YesNo>::new(format!("{what}?")),
                            ),
                            cx,
                        )?;
                        if cx.round_ready() {
                            __mcp_st = __mcp_State::S0 { __mcp_m0 };
                            continue '__mcp_dispatch;
                        }
                        return __mcp::suspend_keys(
                            "S0",
                            [],
                            [("__mcp_m0", __mcp_m0.saved("answer"))],
                        );
                    }
                    __mcp_State::S0 { __mcp_m0 } => {
                        let answer: YesNo = __mcp::answer_for(cx, __mcp_m0)?;
                        return __mcp_finish(Ok(answer.ok));
                    }
                }
            }
        }
        /// What the flow takes from the flows it calls.
        fn __mcp_flows() -> __mcp::Vec<__mcp::FlowInfo> {
            ::std::vec![]
        }
    }
    impl<'__mcp_a> ::core::future::IntoFuture for confirm<'__mcp_a> {
        type Output = __mcp_Ret;
        type IntoFuture = __mcp::BoxFuture<'__mcp_a, __mcp_Ret>;
        fn into_future(self) -> Self::IntoFuture {
            let confirm(__mcp_cx, __mcp_p0) = self;
            __mcp::Box::pin(async move {
                let __mcp_mark = __mcp::flow_enter(__mcp_cx, "confirm");
                let __mcp_r = Self::__mcp_direct(&mut *__mcp_cx, __mcp_p0).await;
                __mcp::flow_leave(__mcp_cx, __mcp_mark);
                __mcp_r
            })
        }
    }
    impl<'__mcp_a> __mcp::Flow for confirm<'__mcp_a> {
        type Output = __mcp_Ret;
        const NAME: &'static str = "confirm";
        fn context(&mut self) -> &mut __mcp::ToolContext {
            &mut *self.0
        }
        fn info() -> __mcp::FlowInfo {
            let __mcp_flows = Self::__mcp_flows();
            __mcp::FlowInfo {
                name: "confirm",
                capabilities: __mcp::flow_capabilities(
                    __mcp::RequiredCapabilities {
                        elicitation: true,
                        sampling: false,
                        roots: false,
                    },
                    &__mcp_flows,
                ),
                state: __mcp::state_keys(::std::vec![], &__mcp_flows),
                layout: __mcp::layout_with("loPxjN4hJaA", &__mcp_flows),
                rounds: __mcp::flow_rounds(1u32, &__mcp_flows),
                loops: __mcp::flow_loops(false, &__mcp_flows),
                validation: __mcp::validate_with(
                    (|| -> __mcp::Result<(), __mcp::RegistrationError> {
                        __mcp::check_elicitation::<YesNo>("answer")?;
                        __mcp::Result::Ok(())
                    })(),
                    &__mcp_flows,
                ),
            }
        }
        fn start<'s>(self) -> __mcp::BoxFuture<'s, __mcp::FlowStep<__mcp_Ret>>
        where
            Self: 's,
        {
            let confirm(__mcp_cx, __mcp_p0) = self;
            __mcp::Box::pin(async move {
                let __mcp_mark = __mcp::flow_enter(__mcp_cx, "confirm");
                let __mcp_out = Self::__mcp_run(
                        &mut *__mcp_cx,
                        __mcp::Option::Some((__mcp_p0,)),
                        __mcp::Option::None,
                    )
                    .await;
                __mcp::flow_leave(__mcp_cx, __mcp_mark);
                __mcp::flow_outcome(__mcp_out)
            })
        }
        fn resume(
            cx: &mut __mcp::ToolContext,
            state: __mcp::Value,
        ) -> __mcp::BoxFuture<'_, __mcp::FlowStep<__mcp_Ret>> {
            __mcp::Box::pin(async move {
                let __mcp_mark = __mcp::flow_enter(cx, "confirm");
                let __mcp_out = Self::__mcp_run(
                        &mut *cx,
                        __mcp::Option::None,
                        __mcp::Option::Some(state),
                    )
                    .await;
                __mcp::flow_leave(cx, __mcp_mark);
                __mcp::flow_outcome(__mcp_out)
            })
        }
    }
};
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
#[allow(warnings, clippy::all)]
const _: () = {
    use ::mcp_tool_runtime::__private::v0_1_0 as __mcp;
    use __mcp::autoref::traits::*;
    type __mcp_Ret = Result<String, ToolError>;
    type __mcp_Ok = <__mcp_Ret as __mcp::ToolReturn>::Ok;
    type __mcp_Err = <__mcp_Ret as __mcp::ToolReturn>::Error;
    impl delete {
        /// The tool, ready for `Server::builder(..).tool(..)`.
        fn tool() -> Self {
            delete {}
        }
        /// What the tool takes from the flows it calls.
        fn __mcp_flows() -> __mcp::Vec<__mcp::FlowInfo> {
            ::std::vec![
                (&& __mcp::autoref::wrap_witness(& if false {
                __mcp::Option::Some(confirm(loop {}, loop {})) } else {
                __mcp::Option::None })).ops().info()
            ]
        }
        /// The completed value of the function's result.
        fn __mcp_done(
            __mcp_r: __mcp_Ret,
            __mcp_uri: &str,
        ) -> __mcp::Result<__mcp::CallToolResult, __mcp::ToolError> {
            match __mcp::ToolReturn::into_result(__mcp_r) {
                __mcp::Result::Ok(__mcp_v) => {
                    (&&__mcp::autoref::OutputOf::<__mcp_Ok>::new()).finish(__mcp_v)
                }
                __mcp::Result::Err(__mcp_e) => {
                    __mcp::Result::Err(
                        (&&__mcp::autoref::ErrorOf::<__mcp_Err>::new())
                            .tool_error(__mcp_e),
                    )
                }
            }
        }
        async fn __mcp_direct(
            cx: &mut __mcp::ToolContext,
            mut __mcp_args: __mcp::Value,
            __mcp_uri: __mcp::String,
        ) -> __mcp::Result<__mcp::CallToolResult, __mcp::ToolError> {
            let __mcp_p0: Items = __mcp::parse_args::<
                Items,
            >(::core::mem::take(&mut __mcp_args))?;
            let __mcp_p1: State<Store> = <State<
                Store,
            > as __mcp::FromContext>::from_context(cx)?;
            let __mcp_r = delete(&mut *cx, __mcp_p0, __mcp_p1).await;
            __mcp::direct_done(
                cx,
                __mcp_r,
                |__mcp_r| Self::__mcp_done(__mcp_r, &__mcp_uri),
            )
        }
    }
    impl __mcp::Tool for delete {
        fn info(&self) -> __mcp::ToolInfo {
            __mcp::tool_info(
                &__mcp::Meta {
                    name: "delete",
                    description: __mcp::Option::Some("Deletes after a confirmation."),
                    layout: "bcupcKlGybU",
                    ..__mcp::Meta::DEFAULT
                },
                __mcp::input_schema::<Items>(),
                { (&&__mcp::autoref::OutputOf::<__mcp_Ok>::new()).schema() },
                &Self::__mcp_flows(),
            )
        }
        fn validate(&self) -> __mcp::Result<(), __mcp::RegistrationError> {
            __mcp::validate_with(
                (|| -> __mcp::Result<(), __mcp::RegistrationError> {
                    __mcp::Result::Ok(())
                })(),
                &Self::__mcp_flows(),
            )
        }
        fn required_state(&self) -> __mcp::Vec<__mcp::StateKey> {
            __mcp::state_keys(
                ::std::vec![< State < Store > as __mcp::FromContext > ::keys()],
                &Self::__mcp_flows(),
            )
        }
        fn step<'a>(
            &'a self,
            cx: &'a mut __mcp::ToolContext,
            args: __mcp::Value,
            state: __mcp::Option<__mcp::Value>,
        ) -> __mcp::BoxFuture<'a, __mcp::Result<__mcp::Step, __mcp::ToolError>> {
            async fn __mcp_run(
                cx: &mut __mcp::ToolContext,
                __mcp_args: __mcp::Value,
                __mcp_state: __mcp::Option<__mcp::Value>,
            ) -> __mcp::Result<__mcp::FlowStep<__mcp_Ret>, __mcp_Err> {
                enum __mcp_State<__mcp_T0> {
                    Start,
                    S0 { __mcp_m0: __mcp_T0 },
                }
                fn __mcp_finish(
                    r: __mcp_Ret,
                ) -> __mcp::Result<__mcp::FlowStep<__mcp_Ret>, __mcp_Err> {
                    __mcp::Result::Ok(__mcp::FlowStep::Done(r))
                }
                fn __mcp_ok<__mcp_V>(
                    r: __mcp::Result<__mcp_V, __mcp::ToolError>,
                    cx: &mut __mcp::ToolContext,
                ) -> __mcp::Result<__mcp_V, __mcp_Err> {
                    __mcp::ok(r, cx)
                }
                let mut __mcp_parsed = __mcp::Option::Some(
                    __mcp_ok(__mcp::parse_args::<Items>(__mcp_args.clone()), cx)?,
                );
                let mut __mcp_st = match __mcp_state {
                    __mcp::Option::None => __mcp_State::Start,
                    __mcp::Option::Some(__mcp_saved) => {
                        let (__mcp_stage, mut __mcp_vars) = __mcp_ok(
                            __mcp::open_state(__mcp_saved),
                            cx,
                        )?;
                        match __mcp_stage.as_str() {
                            "S0" => {
                                __mcp_State::S0 {
                                    __mcp_m0: __mcp_ok(__mcp_vars.flow("__mcp_m0", "sure"), cx)?,
                                }
                            }
                            _ => {
                                return __mcp::Result::Err(
                                    __mcp::abort::<__mcp_Err>(cx, __mcp::invalid_state()),
                                );
                            }
                        }
                    }
                };
                '__mcp_dispatch: loop {
                    match __mcp_st {
                        __mcp_State::Start => {
                            let args: Items = __mcp_ok(
                                __mcp::stage_args(&mut __mcp_parsed, &__mcp_args),
                                cx,
                            )?;
                            let __mcp_site0: __mcp::String = __mcp::String::from("sure");
                            let __mcp_call = confirm(
                                cx,
                                format!("Delete {}", args.name),
                            );
                            let __mcp_m0 = match (&&__mcp::autoref::wrap(&__mcp_call))
                                .ops()
                                .start(
                                    ::core::clone::Clone::clone(&__mcp_site0),
                                    __mcp_call,
                                )
                                .await
                            {
                                __mcp::FlowStep::Done(__mcp_r) => {
                                    __mcp::FlowSlot::Done(__mcp_r)
                                }
                                __mcp::FlowStep::Suspended(__mcp_s) => {
                                    return __mcp::suspend_flow(
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
                            let args: Items = __mcp_ok(
                                __mcp::stage_args(&mut __mcp_parsed, &__mcp_args),
                                cx,
                            )?;
                            let store: State<Store> = __mcp_ok(
                                <State<Store> as __mcp::FromContext>::from_context(cx),
                                cx,
                            )?;
                            let __mcp_r0 = match __mcp_m0 {
                                __mcp::FlowSlot::Done(__mcp_r) => __mcp_r,
                                __mcp::FlowSlot::Saved(__mcp_site0, __mcp_s) => {
                                    let __mcp_w = if false {
                                        __mcp::Option::Some(confirm(loop {}, loop {}))
                                    } else {
                                        __mcp::Option::None
                                    };
                                    match (&&__mcp::autoref::wrap_witness(&__mcp_w))
                                        .ops()
                                        .resume(
                                            cx,
                                            ::core::clone::Clone::clone(&__mcp_site0),
                                            __mcp_s,
                                        )
                                        .await
                                    {
                                        __mcp::FlowStep::Done(__mcp_r) => __mcp_r,
                                        __mcp::FlowStep::Suspended(__mcp_s) => {
                                            return __mcp::suspend_flow(
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
            __mcp::Box::pin(async move {
                let __mcp_out = __mcp_run(&mut *cx, args, state).await;
                __mcp::to_step(cx, __mcp_out, |__mcp_r| Self::__mcp_done(__mcp_r, ""))
            })
        }
        fn direct<'a>(
            &'a self,
            cx: &'a mut __mcp::ToolContext,
            args: __mcp::Value,
        ) -> __mcp::Option<
            __mcp::BoxFuture<'a, __mcp::Result<__mcp::CallToolResult, __mcp::ToolError>>,
        > {
            (&__mcp::autoref::DirectWrap::new(
                Self::__mcp_direct(cx, args, __mcp::String::new()),
            ))
                .boxed()
        }
    }
};
